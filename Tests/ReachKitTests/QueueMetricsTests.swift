import Foundation
import Metrics
import MetricsTestKit
import ReachKit
import ReachKitQueue
import ReachKitTesting
import ReachTesting
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
        #expect(metrics.recorders.allSatisfy { $0.dimensions.contains { $0 == ("queue", "measured") } }, "the queue made without a backend reported nothing")
        await closeStore(store)
    }
}
