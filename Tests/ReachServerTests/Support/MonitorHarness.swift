import Logging
import ReachCore
import ReachServer
import ReachTesting

/// A monitor on a test clock with `run()` going in the background, plus the metrics and status
/// server built on it: what the daemon wires, minus the adapters.
final class MonitorHarness: Sendable {
    let clock = TestClock()
    let monitor: ConnectivityMonitor
    let metrics: ReachMetrics
    let targets: [ProbeTarget]
    private let runner: Task<Void, Never>

    init(targets: [ProbeTarget] = [.http("server")], _ configure: (inout ConnectivityMonitor.Configuration) -> Void = { _ in }) {
        var configuration = ConnectivityMonitor.Configuration(targets: targets)
        configure(&configuration)
        self.targets = targets
        monitor = ConnectivityMonitor(configuration: configuration, clock: clock.monitorClock, logger: .quiet)
        metrics = ReachMetrics(targets: targets)
        let monitor = self.monitor
        runner = Task { await monitor.run() }
    }

    func server(
        address: StatusServer.Address = .tcp(host: "127.0.0.1", port: 0), token: String? = nil,
        heartbeat: Duration = .seconds(15), checkWaitLimit: Duration = .seconds(3)
    ) -> StatusServer {
        StatusServer(
            monitor: monitor, metrics: metrics, address: address, bearerToken: token.map(Secret.init),
            heartbeatInterval: heartbeat, checkWaitLimit: checkWaitLimit, logger: .quiet)
    }

    func record(_ result: ProbeResult) {
        monitor.record(result, epoch: monitor.probeEpoch)
    }

    /// Usable link and a healthy target: `connected`.
    func connect() {
        monitor.update(links: .of(.usable()))
        record(.ok("server"))
    }

    var sequence: UInt64 { monitor.current.sequence }

    func stop() async {
        runner.cancel()
        await runner.value
    }

    deinit { runner.cancel() }
}

extension Logger {
    static let quiet = Logger(label: "reachd-test") { _ in SwiftLogNoOpLogHandler() }
}
