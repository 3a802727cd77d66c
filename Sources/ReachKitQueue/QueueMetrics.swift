import Metrics
import ReachSupport

/// A queue's counts and age as swift-metrics gauges: recorded for a program that bootstrapped a
/// metrics backend (`MetricsSystem.bootstrap`, or a task-local `withMetricsFactory` around the
/// queue's creation), and not even computed for one that did not.
struct QueueMetrics: Sendable {
    let pending: Gauge
    let inFlight: Gauge
    let dead: Gauge
    let oldestAge: Gauge

    /// The gauges, from the factory in force now; `nil` when that is swift-metrics' no-op default,
    /// whose gauges record nothing (so the queue skips the counting, which reads the store).
    init?(queue: String) {
        let factory = MetricsSystem.factory
        guard !(factory is NOOPMetricsHandler) else { return nil }
        let dimensions = [("queue", queue)]
        pending = Gauge(label: "reachkit_queue_pending", dimensions: dimensions, factory: factory)
        inFlight = Gauge(label: "reachkit_queue_in_flight", dimensions: dimensions, factory: factory)
        dead = Gauge(label: "reachkit_queue_dead", dimensions: dimensions, factory: factory)
        oldestAge = Gauge(label: "reachkit_queue_oldest_pending_age_seconds", dimensions: dimensions, factory: factory)
    }

    func record(_ stats: QueueStats) {
        pending.record(stats.pending)
        inFlight.record(stats.inFlight)
        dead.record(stats.dead)
        oldestAge.record(stats.oldestPendingAge?.seconds ?? 0)
    }
}
