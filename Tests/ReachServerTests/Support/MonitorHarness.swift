import ReachMetrics
import ReachServer
import ReachSupport
import ReachTesting

extension MonitorHarness {
    /// The status server the daemon would build on this monitor; pass `metrics` to read what it exposes.
    func server(
        metrics: ReachMetrics? = nil,
        address: StatusServer.Address = .tcp(host: "127.0.0.1", port: 0),
        token: String? = nil,
        heartbeat: Duration = .seconds(15),
        checkWaitLimit: Duration = .seconds(3),
        history: (any HistoryReading)? = HistoryStandIn()
    ) -> StatusServer {
        StatusServer(
            monitor: monitor,
            metrics: metrics ?? ReachMetrics(targets: targets),
            address: address,
            bearerToken: token.map(Secret.init),
            heartbeatInterval: heartbeat,
            checkWaitLimit: { checkWaitLimit },
            history: history,
            logger: .quiet
        )
    }
}
