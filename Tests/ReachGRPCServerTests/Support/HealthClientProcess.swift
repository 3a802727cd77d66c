import Foundation
import ReachTestRigs
import ReachTesting

#if canImport(Glibc)
import Glibc
#endif

/// `Clients/health_client.py` running as a child process: grpcio's generated `HealthStub`, a
/// health client nobody here wrote, printing each answer as a line.
///
/// Run through ``ChildProcess``, whose output is read on threads of its own: a test waits for
/// lines while the server it talks to runs on the same small pool. (It used a `FileHandle`
/// readability handler, whose dispatch source outlived the pipe it watched: libdispatch then
/// crashed the whole test process in `_dispatch_event_loop_drain`.)
final class HealthClientProcess: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case pythonPackagesMissing
        case timedOut(waitingFor: String, lines: [String])

        var description: String {
            switch self {
            case .pythonPackagesMissing:
                "python3 cannot import grpc_health even after pip install grpcio grpcio-health-checking"
            case .timedOut(let condition, let lines): "timed out waiting for \(condition); lines so far: \(lines)"
            }
        }
    }

    private let child: ChildProcess

    /// Starts `health_client.py PORT arguments...` against 127.0.0.1.
    convenience init(port: Int, _ arguments: String...) throws {
        try self.init(port: port, arguments: arguments)
    }

    /// - Parameter token: Sent as `authorization: Bearer <token>` metadata on every call.
    init(port: Int, arguments: [String], token: String? = nil) throws {
        guard Self.pythonReady else { throw Failure.pythonPackagesMissing }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Clients/health_client.py")
        child = try ChildProcess(
            "health_client.py",
            executable: "/usr/bin/env",
            arguments: ["python3", script.path, String(port)] + arguments,
            environment: token.map { token in
                ProcessInfo.processInfo.environment.merging(["HEALTH_TOKEN": token]) { $1 }
            }
        )
    }

    /// The complete lines printed so far.
    var lines: [String] { child.output }

    /// Waits until at least `count` lines were printed and returns them all.
    @discardableResult
    func lines(atLeast count: Int, within limit: Duration = .seconds(15)) async throws -> [String] {
        try await waitFor("\(count) lines", within: limit) { child.output.count >= count }
        return child.output
    }

    /// Waits until the client has exited (it does once its output is complete) and returns every line.
    func allLines(within limit: Duration = .seconds(15)) async throws -> [String] {
        try await waitForExit(within: limit)
        _ = await child.finish()
        return child.output
    }

    /// Waits until the process has exited.
    func waitForExit(within limit: Duration = .seconds(15)) async throws {
        try await waitFor("the client to exit", within: limit) { !child.isRunning }
    }

    private func waitFor(_ condition: String, within limit: Duration, _ check: () -> Bool) async throws {
        do {
            try await waitUntil(condition, timeout: limit) { check() }
        } catch is TimedOutWaiting {
            throw Failure.timedOut(waitingFor: condition, lines: child.output)
        }
    }

    /// SIGKILL (a test runner's children may have SIGTERM blocked); Foundation reaps it.
    func kill() {
        if child.isRunning { child.signal(SIGKILL) }
    }

    deinit { kill() }

    /// Runs one command to completion and returns its lines, killing the client on failure.
    static func run(port: Int, token: String? = nil, _ arguments: String...) async throws -> [String] {
        let client = try HealthClientProcess(port: port, arguments: arguments, token: token)
        defer { client.kill() }
        return try await client.allLines()
    }

    /// Whether `python3` (pyenv's, from PATH) can import `grpc_health`; installs grpcio and
    /// grpcio-health-checking with pip the first time it cannot. Evaluated once per test run.
    static let pythonReady = PythonModules.importable("grpc_health", installing: ["grpcio", "grpcio-health-checking"])
}
