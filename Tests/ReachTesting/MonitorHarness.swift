import Logging
import ReachCore

/// A monitor on a test clock with `run()` going in the background for the test's lifetime: what
/// the daemon wires, minus the adapters.
package final class MonitorHarness: Sendable {
    package let clock = TestClock()
    package let monitor: ConnectivityMonitor
    package let targets: [ProbeTarget]
    private let runner: Task<Void, Never>

    package init(
        targets: [ProbeTarget] = [.http("server")],
        logger: Logger = .quiet,
        _ configure: (inout ConnectivityMonitor.Configuration) -> Void = { _ in }
    ) {
        var configuration = ConnectivityMonitor.Configuration(targets: targets)
        configure(&configuration)
        self.targets = targets
        monitor = ConnectivityMonitor(configuration: configuration, clock: clock.monitorClock, logger: logger)
        let monitor = self.monitor
        runner = Task { await monitor.run() }
    }

    package func record(_ result: ProbeResult) {
        monitor.record(result, epoch: monitor.probeEpoch)
    }

    /// Usable link and a healthy `server` target: `connected`.
    package func connect() {
        monitor.update(links: .of(.usable()))
        record(.ok("server"))
    }

    package var state: ConnectivityState { monitor.current.verdict.state }
    package var reason: VerdictReason { monitor.current.verdict.reason }
    package var sequence: UInt64 { monitor.current.sequence }

    package func stop() async {
        runner.cancel()
        await runner.value
    }

    deinit { runner.cancel() }
}

extension Logger {
    /// Says nothing: tests assert on behaviour, not on log lines.
    package static let quiet = Logger(label: "reachd-test") { _ in SwiftLogNoOpLogHandler() }
}
