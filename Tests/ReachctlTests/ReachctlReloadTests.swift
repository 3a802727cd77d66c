import Foundation
import ReachTestRigs
import Testing

@Suite("reachctl reload")
struct ReachctlReloadTests {
    @Test func itSendsSIGHUPToTheReachdItNames() async throws {
        let reachd = try ReachdProcess(["--config", BuiltProducts.shippedConfiguration])
        defer { reachd.signal(SIGTERM) }
        _ = try await reachd.waitForLog(containing: "reachd running")
        let result = try await reachctl(["reload", "--pid", "\(reachd.processIdentifier)"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("reload requested (SIGHUP to reachd, pid \(reachd.processIdentifier))"))
        _ = try await reachd.waitForLog(containing: "configuration reloaded: targets +0 -0 ~0")
    }

    @Test func itRefusesToSignalAProcessThatIsNotReachd() async throws {
        let result = try await reachctl(["reload", "--pid", "\(getpid())"])
        #expect(result.status == 2)
        #expect(result.errors.contains("process \(getpid()) is not reachd"), "\(result.errors)")
    }
}
