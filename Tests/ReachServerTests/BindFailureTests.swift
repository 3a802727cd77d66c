import Foundation
import ReachPOSIX
import ReachServer
import ReachTestRigs
import ReachTesting
import ServiceLifecycle
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An address the server cannot listen on: running it throws the system's reason, NIO's error
/// translated, for the daemon to say in its words.
@Suite("Status API: an address it cannot listen on", .timeLimit(.minutes(1)))
struct BindFailureTests {
    private func bindFailure(_ address: StatusServer.Address) async -> SystemCallError? {
        let harness = MonitorHarness()
        var failure: SystemCallError?
        // As the daemon runs it: a `Service` (the application's own `run()` would pick
        // Hummingbird's stock one, statically).
        let application: any Service = harness.server(address: address).makeApplication()
        do {
            try await application.run()
        } catch {
            failure = error as? SystemCallError
            if failure == nil { Issue.record("not a system call error: \(error)") }
        }
        await harness.stop()
        return failure
    }

    @Test func aTakenPort() async throws {
        let taken = try LoopbackListener()
        #expect(
            await bindFailure(.tcp(host: "127.0.0.1", port: taken.port)) == SystemCallError("bind", code: EADDRINUSE)
        )
    }

    @Test func anAddressOfAnotherMachine() async {
        #expect(await bindFailure(.tcp(host: "192.0.2.7", port: 0)) == SystemCallError("bind", code: EADDRNOTAVAIL))
    }

    @Test func aSocketInAMissingDirectory() async {
        let path = FileManager.default.temporaryDirectory.appending(path: "reachd-missing-\(UUID())/status.sock").path
        #expect(await bindFailure(.unixSocket(path)) == SystemCallError("bind", code: ENOENT))
    }

    @Test func aSocketPathTooLong() async {
        let path = FileManager.default.temporaryDirectory.appending(path: String(repeating: "x", count: 120)).path
        #expect(await bindFailure(.unixSocket(path)) == SystemCallError("bind", code: ENAMETOOLONG))
    }

    @Test func aFileThatIsNotASocketInItsPlace() async throws {
        let path = FileManager.default.temporaryDirectory.appending(path: "reachd-plain-\(UUID())").path
        try "not a socket".write(toFile: path, atomically: false, encoding: .utf8)
        defer { unlink(path) }
        #expect(await bindFailure(.unixSocket(path)) == SystemCallError("bind", code: ENOTSOCK))
    }
}
