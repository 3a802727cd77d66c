import ReachCore
import ReachMetrics
import ServiceLifecycle

/// Keeps the Prometheus metrics in step with the monitor's verdicts and callback reports.
struct MetricsService: Service {
    let metrics: ReachMetrics
    let monitor: ConnectivityMonitor

    func run() async {
        await cancelWhenGracefulShutdown { await metrics.follow(monitor) }
    }
}
