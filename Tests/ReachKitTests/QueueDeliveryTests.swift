import ReachKit
import ReachKitQueue
import ReachKitTesting
import ReachTesting
import Synchronization
import Testing

/// Deliveries cannot stall the queue: a deadline cuts a hung handler, a failing item does not hold
/// back the others above concurrency 1, and a loss may cut what is under way.
@Suite("A durable queue's deliveries", .serialized)
struct QueueDeliveryTests {
    @Test func aHungHandlerIsCancelledAtItsDeadlineCountedAsARetryableFailureAndRetried() async throws {
        let attempts = Collected<Int>()
        let cancelled = Collected<Int>()
        let policy = QueuePolicy(
            retry: ReconnectBackoff(first: .milliseconds(10), longest: .milliseconds(10)),
            deliveryTimeout: .milliseconds(200)
        )
        let rig = try await RunningQueue<Int>("deadline", policy: policy) { delivery in
            attempts.append(delivery.attempt)
            guard delivery.attempt == 1 else { return }
            // Hangs, as a request to a server that never answers does, until it is cancelled.
            do { try await Task.sleep(for: .seconds(3_600)) } catch { cancelled.append(delivery.attempt) }
            throw CancellationError()
        }
        try await rig.queue.enqueue(1, key: "hung")
        try await waitUntil("the retry delivered") {
            let stats = try? await rig.queue.stats()
            return attempts.count == 2 && stats?.pending == 0
        }
        #expect(attempts.all == [1, 2], "retried once, as attempt 2")
        #expect(cancelled.all == [1], "the hung attempt was cancelled")
        #expect(try await rig.queue.deadLetters().isEmpty)
        await rig.stop()
    }

    @Test func aHandlerThatIgnoresCancellationGivesUpItsPlaceButIsNotHandedOverTwice() async throws {
        let gate = Gate()
        let delivered = Collected<String>()
        let starts = Collected<String>()
        let policy = QueuePolicy(
            retry: ReconnectBackoff(first: .milliseconds(10), longest: .milliseconds(10)),
            deliveryTimeout: .milliseconds(200)
        )
        let rig = try await RunningQueue<Int>("stuck", policy: policy) { delivery in
            starts.append(delivery.key)
            if delivery.key == "stuck", delivery.attempt == 1 { await gate.wait() }  // deaf to cancellation
            delivered.append(delivery.key)
        }
        try await rig.queue.enqueue(contentsOf: [("stuck", 1), ("next", 2)])
        // At concurrency 1, the item behind the stuck one is delivered once the deadline passed.
        try await waitUntil("the next item delivered") { delivered.all == ["next"] }
        try await waitUntil("the next item recorded, and the stuck handler still running") {
            let stats = try? await rig.queue.stats()
            return stats?.inFlight == 1 && stats?.pending == 0
        }
        #expect(starts.all == ["stuck", "next"], "the stuck item is not handed over again while its handler runs")
        gate.open()
        try await waitUntil("the stuck item retried and delivered") { delivered.all == ["next", "stuck", "stuck"] }
        try await waitUntil("an empty queue") { (try? await rig.queue.stats()).map { $0.pending + $0.inFlight } == 0 }
        #expect(starts.all == ["stuck", "next", "stuck"])
        await rig.stop()
    }

    @Test func atConcurrencyFourAFailingItemWaitsOutItsBackoffWhileTheOthersGoOn() async throws {
        let clock = TestClock()
        let delivered = Collected<Int>()
        let failures = Collected<Int>()
        // Its backoff never passes unless the test moves the clock.
        let policy = QueuePolicy(
            concurrency: 4,
            retry: ReconnectBackoff(first: .seconds(10), longest: .seconds(10)),
            breakerThreshold: 100
        )
        let rig = try await RunningQueue<Int>("head-of-line", clock: clock, policy: policy) { delivery in
            if delivery.item == 0, delivery.attempt == 1 {
                failures.append(delivery.item)
                throw DeliveryFailure.retryable("503 from the server")
            }
            delivered.append(delivery.item)
        }
        try await rig.queue.enqueue(contentsOf: (0..<20).map { (key: "item-\($0)", item: $0) })
        try await waitUntil("every other item delivered") { delivered.count == 19 }
        #expect(Set(delivered.all) == Set(1..<20) && failures.all == [0], "item 0 failed, and held back nothing")
        #expect(try await rig.queue.stats().pending == 1)
        try await advance(clock, of: rig.queue, until: "item 0 delivered on its retry", step: .seconds(1)) {
            delivered.count == 20
        }
        #expect(delivered.all.last == 0)
        await rig.stop()
    }

    @Test func atConcurrencyOneAFailingItemHoldsBackThoseBehindIt() async throws {
        let clock = TestClock()
        let delivered = Collected<Int>()
        let policy = QueuePolicy(
            retry: ReconnectBackoff(first: .seconds(10), longest: .seconds(10)),
            breakerThreshold: 100
        )
        let rig = try await RunningQueue<Int>("in-order", clock: clock, policy: policy) { delivery in
            if delivery.item == 0, delivery.attempt == 1 { throw DeliveryFailure.retryable("503 from the server") }
            delivered.append(delivery.item)
        }
        try await rig.queue.enqueue(contentsOf: (0..<5).map { (key: "item-\($0)", item: $0) })
        try await waitUntil("the retry timer asleep") {
            let stats = try? await rig.queue.stats()
            return clock.sleeperCount > 0 && stats?.inFlight == 0
        }
        #expect(delivered.count == 0, "strict order: nothing passes the item waiting for its retry")
        try await advance(clock, of: rig.queue, until: "all delivered", step: .seconds(1)) { delivered.count == 5 }
        #expect(delivered.all == Array(0..<5))
        await rig.stop()
    }

    @Test func aLossCancelsTheDeliveriesUnderWayWhenAskedAndCountsNoAttempt() async throws {
        let attempts = Collected<Int>()
        let cut = Collected<Int>()
        let rig = try await RunningQueue<Int>("loss", policy: QueuePolicy(cancelsDeliveriesOnLoss: true)) { delivery in
            attempts.append(delivery.attempt)
            if attempts.count == 1 {
                do { try await Task.sleep(for: .seconds(3_600)) } catch { cut.append(delivery.attempt) }
                throw CancellationError()
            }
        }
        try await rig.queue.enqueue(1, key: "upload")
        try await waitUntil("the delivery under way") { attempts.count == 1 }
        await rig.service.disconnect()
        try await waitUntil("the delivery cut") {
            let stats = try? await rig.queue.stats()
            return cut.count == 1 && stats?.inFlight == 0
        }
        #expect(try await rig.queue.stats().pending == 1, "the item waits for the restoration")
        await rig.service.connect()
        try await waitUntil("delivered after the restoration") {
            let stats = try? await rig.queue.stats()
            return attempts.count == 2 && stats?.pending == 0
        }
        #expect(attempts.all == [1, 1], "the cut delivery counted no attempt")
        await rig.stop()
    }
}
