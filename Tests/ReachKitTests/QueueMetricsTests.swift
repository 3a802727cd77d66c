import Foundation
import Metrics
import MetricsTestKit
import ReachKit
import ReachKitQueue
import ReachKitTesting
import ReachTesting
import Synchronization
import Testing

/// A queue's gauges are opt-in through swift-metrics' own bootstrap: a queue made where a backend
/// is in force reports to it, and one made without records nothing.
@Suite("A durable queue's metrics")
struct QueueMetricsTests {
    @Test func aQueueReportsToTheBackendInForceWhenItIsMadeAndOnlyThen() async throws {
        let directory = try TemporaryDirectory("metrics")
        let store = try await openStore("\(directory)/queue.sqlite")
        let service = TestConnectivityService(.disconnected)
        let metrics = TestMetrics()
        // What `MetricsSystem.bootstrap(metrics)` does for a program, for this task only.
        let measured = withMetricsFactory(metrics) {
            DurableQueue<Int>(name: "measured", store: store, service: service, logger: .quiet) { _ in }
        }
        let unmeasured = DurableQueue<Int>(name: "unmeasured", store: store, service: service, logger: .quiet) { _ in }
        try await measured.enqueue(contentsOf: (0..<3).map { (key: "k\($0)", item: $0) })
        try await unmeasured.enqueue(contentsOf: (0..<3).map { (key: "k\($0)", item: $0) })

        let dimensions = [("queue", "measured")]
        #expect(try metrics.expectGauge("reachkit_queue_pending", dimensions).lastValue == 3)
        #expect(try metrics.expectGauge("reachkit_queue_in_flight", dimensions).lastValue == 0)
        #expect(try metrics.expectGauge("reachkit_queue_dead", dimensions).lastValue == 0)
        #expect(try metrics.expectGauge("reachkit_queue_oldest_pending_age_seconds", dimensions).lastValue != nil)
        #expect(
            metrics.recorders.allSatisfy { $0.dimensions.contains { $0 == ("queue", "measured") } },
            "the queue made without a backend reported nothing"
        )
        await closeStore(store)
    }

    /// A scripted day: deliveries that succeed, fail and die while connected; then an outage in
    /// which nothing happens but time, an item waits and another expires. The counters say what
    /// happened, the oldest item's age keeps growing through the outage, and the breaker's state is told.
    @Test func theMetricsTellAScriptedOutage() async throws {
        let clock = TestClock()
        let metrics = TestMetrics()
        let policy = QueuePolicy(
            retry: ReconnectBackoff(first: .milliseconds(10), longest: .milliseconds(10)),
            breakerThreshold: 1,
            breakerCooldown: .seconds(1)
        )
        let rig = try await withMetricsFactory(metrics) {
            try await RunningQueue<String>("outage", clock: clock, policy: policy) { delivery in
                switch (delivery.item, delivery.attempt) {
                case ("flaky", 1): throw DeliveryFailure.retryable("503 from the server")
                case ("refused", _): throw DeliveryFailure.permanent("400: malformed")
                default: break
                }
            }
        }
        let dimensions = [("queue", "uploads")]
        func counter(_ label: String, _ more: [(String, String)] = []) -> Int64 {
            metrics.counters(label: "reachkit_queue_\(label)_total", dimensions: dimensions + more).map(\.totalValue)
                .reduce(0, +)
        }
        func gauge(_ label: String) -> Double? {
            try? metrics.expectGauge("reachkit_queue_\(label)", dimensions).lastValue
        }

        try await rig.queue.enqueue(contentsOf: [("a", "fine"), ("b", "flaky"), ("c", "refused")])
        try await advance(clock, of: rig.queue, until: "all three handled") {
            counter("delivered") == 2 && counter("dead") == 1
        }
        #expect(counter("failed", [("kind", "retryable")]) == 1 && counter("failed", [("kind", "permanent")]) == 1)
        #expect(counter("retried") == 1)
        #expect(counter("dead", [("reason", "rejected")]) == 1)
        #expect(
            try metrics.expectTimer("reachkit_queue_delivery_duration_seconds", dimensions).values.count == 4,
            "a, b twice, c"
        )
        let breaker = try metrics.expectGauge("reachkit_queue_breaker_state", dimensions).values
        #expect(
            breaker.contains(2) && breaker.last == 0,
            "open after b's failure (threshold 1), closed again by its success: \(breaker)"
        )

        // The outage: one item waits, one expires; nothing else happens but time.
        await rig.service.disconnect()
        try await rig.queue.enqueue("waits", key: "d")
        try await rig.queue.enqueue("expires", key: "e", expiresAfter: .seconds(12))
        #expect(gauge("pending") == 2)
        // Only the queue's timer records the age now: no delivery, no enqueue, no restoration.
        try await advance(clock, of: rig.queue, until: "an age of 10 s", step: .seconds(1)) {
            (gauge("oldest_pending_age_seconds") ?? 0) >= 10
        }
        try await advance(clock, of: rig.queue, until: "an age of 20 s", step: .seconds(1)) {
            (gauge("oldest_pending_age_seconds") ?? 0) >= 20
        }
        #expect(counter("expired") == 1 && counter("dead", [("reason", "expired")]) == 1, "e expired at 12 s")
        #expect(gauge("pending") == 1 && gauge("dead") == 2)
        await rig.stop()
    }
}
