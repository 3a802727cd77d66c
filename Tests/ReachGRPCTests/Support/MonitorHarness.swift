import Logging
import ReachCore
import ReachTesting

/// A monitor on a test clock with `run()` going in the background: what the daemon wires, minus
/// the adapters. (Copied in spirit from ReachServerTests' harness.)
final class MonitorHarness: Sendable {
    let clock = TestClock()
    let monitor: ConnectivityMonitor
    private let runner: Task<Void, Never>

    init(targets: [ProbeTarget] = [.http("server")]) {
        monitor = ConnectivityMonitor(configuration: .init(targets: targets), clock: clock.monitorClock, logger: .quiet)
        let monitor = self.monitor
        runner = Task { await monitor.run() }
    }

    func record(_ result: ProbeResult) {
        monitor.record(result, epoch: monitor.probeEpoch)
    }

    /// Usable link and a healthy target: `connected`.
    func connect() async throws {
        monitor.update(links: .of(.usable()))
        record(.ok("server"))
        try await waitUntil("connected") { monitor.current.verdict.state == .connected }
    }

    /// The target refuses: `disconnected`.
    func disconnect() async throws {
        clock.advance(by: .seconds(2))
        record(.refused("server"))
        try await waitUntil("disconnected") { monitor.current.verdict.state == .disconnected }
    }

    /// The target answers again: `connected`.
    func reconnect() async throws {
        clock.advance(by: .seconds(2))
        record(.ok("server"))
        try await waitUntil("connected again") { monitor.current.verdict.state == .connected }
    }

    func stop() async {
        runner.cancel()
        await runner.value
    }

    deinit { runner.cancel() }
}

extension Logger {
    static let quiet = Logger(label: "reachd-test") { _ in SwiftLogNoOpLogHandler() }
}
