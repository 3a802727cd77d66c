import Logging
import ReachCore

/// A monitor on a test clock with `run()` going in the background for the test's lifetime: what
/// the daemon wires, minus the adapters.
public final class MonitorHarness: Sendable {
    public let clock = TestClock()
    public let monitor: ConnectivityMonitor
    public let targets: [ProbeTarget]
    private let runner: Task<Void, Never>

    public init(
        targets: [ProbeTarget] = [.http("server")], logger: Logger = .quiet,
        _ configure: (inout ConnectivityMonitor.Configuration) -> Void = { _ in }
    ) {
        var configuration = ConnectivityMonitor.Configuration(targets: targets)
        configure(&configuration)
        self.targets = targets
        monitor = ConnectivityMonitor(configuration: configuration, clock: clock.monitorClock, logger: logger)
        let monitor = self.monitor
        runner = Task { await monitor.run() }
    }

    public func record(_ result: ProbeResult) {
        monitor.record(result, epoch: monitor.probeEpoch)
    }

    /// Usable link and a healthy `server` target: `connected`.
    public func connect() {
        monitor.update(links: .of(.usable()))
        record(.ok("server"))
    }

    public var state: ConnectivityState { monitor.current.verdict.state }
    public var reason: VerdictReason { monitor.current.verdict.reason }
    public var sequence: UInt64 { monitor.current.sequence }

    public func stop() async {
        runner.cancel()
        await runner.value
    }

    deinit { runner.cancel() }
}

extension Logger {
    /// Says nothing: tests assert on behaviour, not on log lines.
    public static let quiet = Logger(label: "reachd-test") { _ in SwiftLogNoOpLogHandler() }
}
