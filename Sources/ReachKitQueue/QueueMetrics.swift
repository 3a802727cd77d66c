import Metrics
import ReachKit
import ReachSupport

/// A queue's counts, outcomes and timings through swift-metrics: recorded for a program that
/// bootstrapped a metrics backend (`MetricsSystem.bootstrap`, or a task-local `withMetricsFactory`
/// around the queue's creation), and not even computed for one that did not. Each carries the
/// dimension `queue`.
///
/// - Gauges: `reachkit_queue_pending`, `_in_flight`, `_dead`, `_oldest_pending_age_seconds`
///   (refreshed by a timer while the queue runs, so it keeps growing through an outage), and
///   `_breaker_state` (0 closed, 1 half-open, 2 open).
/// - Counters: `reachkit_queue_delivered_total`; `_failed_total` with `kind` `retryable` or
///   `permanent` (a delivery that overran its deadline is a retryable failure); `_retried_total`
///   (failures given another attempt); `_expired_total`; `_dead_total` with `reason` (`rejected`,
///   `exhausted`, `expired`).
/// - A timer: `reachkit_queue_delivery_duration_seconds`, each delivery's time in the handler,
///   whatever its outcome (a delivery cut at its deadline counts the deadline).
struct QueueMetrics: Sendable {
    private let pending: Gauge
    private let inFlight: Gauge
    private let dead: Gauge
    private let oldestAge: Gauge
    private let breaker: Gauge
    private let delivered: Counter
    private let failedRetryable: Counter
    private let failedPermanent: Counter
    private let retried: Counter
    private let expiredCount: Counter
    private let died: [DeadLetterReason: Counter]
    private let duration: Timer

    /// The metrics, from the factory in force now; `nil` when that is swift-metrics' no-op
    /// default, which records nothing (so the queue skips the counting, which reads the store).
    init?(queue: String) {
        let factory = MetricsSystem.factory
        guard !(factory is NOOPMetricsHandler) else { return nil }
        let dimensions = [("queue", queue)]
        func gauge(_ name: String) -> Gauge {
            Gauge(label: "reachkit_queue_\(name)", dimensions: dimensions, factory: factory)
        }
        func counter(_ name: String, _ more: [(String, String)] = []) -> Counter {
            Counter(label: "reachkit_queue_\(name)_total", dimensions: dimensions + more, factory: factory)
        }
        pending = gauge("pending")
        inFlight = gauge("in_flight")
        dead = gauge("dead")
        oldestAge = gauge("oldest_pending_age_seconds")
        breaker = gauge("breaker_state")
        delivered = counter("delivered")
        failedRetryable = counter("failed", [("kind", "retryable")])
        failedPermanent = counter("failed", [("kind", "permanent")])
        retried = counter("retried")
        expiredCount = counter("expired")
        died = Dictionary(
            uniqueKeysWithValues: DeadLetterReason.allCases.map { ($0, counter("dead", [("reason", $0.rawValue)])) }
        )
        duration = Timer(label: "reachkit_queue_delivery_duration_seconds", dimensions: dimensions, factory: factory)
    }

    /// The gauges, from the queue's counts and its breaker's position.
    func record(pending: Int, inFlight: Int, dead: Int, oldestAge: Duration?, breaker position: BreakerMachine.Position)
    {
        self.pending.record(pending)
        self.inFlight.record(inFlight)
        self.dead.record(dead)
        recordOldestAge(oldestAge)
        recordBreaker(position)
    }

    /// The breaker's position, at once when it moves.
    func recordBreaker(_ position: BreakerMachine.Position) {
        breaker.record(position.gaugeValue)
    }

    /// The oldest waiting item's age (0 when none waits).
    func recordOldestAge(_ age: Duration?) {
        oldestAge.record(age?.seconds ?? 0)
    }

    /// One delivery's end: how long the handler took, and what came of it.
    func delivery(took time: Duration, outcome: Outcome) {
        duration.recordNanoseconds(
            time.components.seconds * 1_000_000_000 + time.components.attoseconds / 1_000_000_000
        )
        switch outcome {
        case .delivered: delivered.increment()
        case .retried:
            failedRetryable.increment()
            retried.increment()
        case .died(let reason, let retryable):
            (retryable ? failedRetryable : failedPermanent).increment()
            died[reason]?.increment()
            if reason == .expired { expiredCount.increment() }
        }
    }

    /// Items that expired waiting, without a delivery.
    func expired(_ count: Int) {
        guard count > 0 else { return }
        expiredCount.increment(by: count)
        died[.expired]?.increment(by: count)
    }

    /// What came of one delivery.
    enum Outcome {
        case delivered
        /// A retryable failure, given another attempt.
        case retried
        /// A failure (retryable or not) that moved the item to the dead letters.
        case died(DeadLetterReason, retryable: Bool)
    }
}

extension BreakerMachine.Position {
    /// `reachkit_queue_breaker_state`: 0 closed, 1 half-open, 2 open.
    fileprivate var gaugeValue: Double {
        switch self {
        case .closed: 0
        case .halfOpen: 1
        case .open: 2
        }
    }
}
