import ReachCore
import ReachTesting

extension MonitorHarness {
    /// Usable link and a healthy target, waited for: `connected`.
    func connectAndWait() async throws {
        connect()
        try await waitUntil("connected") { self.state == .connected }
    }

    /// The target refuses: `disconnected`.
    func disconnect() async throws {
        clock.advance(by: .seconds(2))
        record(.refused("server"))
        try await waitUntil("disconnected") { self.state == .disconnected }
    }

    /// The target answers again: `connected`.
    func reconnect() async throws {
        clock.advance(by: .seconds(2))
        record(.ok("server"))
        try await waitUntil("connected again") { self.state == .connected }
    }
}
