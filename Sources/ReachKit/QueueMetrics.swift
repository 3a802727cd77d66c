import Metrics

/// A queue's counts and age as swift-metrics gauges, for programs that bootstrap a metrics backend.
struct QueueMetrics: Sendable {
    let pending: Gauge
    let inFlight: Gauge
    let dead: Gauge
    let oldestAge: Gauge

    init(queue: String) {
        let dimensions = [("queue", queue)]
        pending = Gauge(label: "reachkit_queue_pending", dimensions: dimensions)
        inFlight = Gauge(label: "reachkit_queue_in_flight", dimensions: dimensions)
        dead = Gauge(label: "reachkit_queue_dead", dimensions: dimensions)
        oldestAge = Gauge(label: "reachkit_queue_oldest_pending_age_seconds", dimensions: dimensions)
    }

    func record(_ stats: QueueStats) {
        pending.record(stats.pending)
        inFlight.record(stats.inFlight)
        dead.record(stats.dead)
        oldestAge.record(stats.oldestPendingAge?.seconds ?? 0)
    }
}
