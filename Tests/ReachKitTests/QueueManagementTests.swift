import ReachKit
import ReachKitQueue
import ReachKitTesting
import ReachTesting
import Synchronization
import Testing

/// What a program (or a person, through it) can do to the items a queue holds: cancel one, let it
/// expire, retry, drop or purge dead letters, and use a key again once the queue has let it go.
@Suite("Managing a durable queue", .serialized)
struct QueueManagementTests {
    @Test func aCancelledItemIsNeverDeliveredAndItsKeyIsFreeAgain() async throws {
        let delivered = Collected<String>()
        let rig = try await RunningQueue<Int>("cancel", .disconnected) { delivered.append($0.key) }
        try await rig.queue.enqueue(contentsOf: [("a", 1), ("b", 2), ("c", 3)])
        #expect(try await rig.queue.cancel(key: "b"))
        #expect(try await !rig.queue.cancel(key: "b"), "nothing left to cancel")
        #expect(try await rig.queue.stats().pending == 2)
        await rig.service.connect()
        try await waitUntil("the rest delivered") {
            let stats = try? await rig.queue.stats()
            return delivered.count == 2 && stats?.pending == 0
        }
        #expect(delivered.all == ["a", "c"])
        #expect(try await rig.queue.enqueue(4, key: "b"), "a cancelled key can be used again")
        #expect(try await rig.queue.enqueue(5, key: "a"), "so can a delivered one")
        try await waitUntil("both delivered") { delivered.count == 4 }
        #expect(delivered.all == ["a", "c", "b", "a"])
        await rig.stop()
    }

    @Test func cancellingAnItemInFlightCancelsItsHandlerAndRecordsNothing() async throws {
        let started = Collected<Int>()
        let cut = Collected<Int>()
        let rig = try await RunningQueue<Int>("cancel-in-flight") { delivery in
            started.append(delivery.attempt)
            do { try await Task.sleep(for: .seconds(3_600)) } catch { cut.append(delivery.attempt) }
            throw CancellationError()
        }
        try await rig.queue.enqueue(1, key: "slow")
        try await waitUntil("the delivery under way") { started.count == 1 }
        #expect(try await rig.queue.cancel(key: "slow"))
        try await waitUntil("the handler cancelled and the queue empty") {
            let stats = try? await rig.queue.stats()
            return cut.count == 1 && stats.map { [$0.pending, $0.inFlight, $0.dead] } == [0, 0, 0]
        }
        #expect(try await rig.queue.deadLetters().isEmpty, "a cancelled item is not a dead letter")
        #expect(started.count == 1, "and is not retried")
        await rig.stop()
    }

    @Test func anItemPastItsExpiryBecomesADeadLetterEvenOffline() async throws {
        let clock = TestClock()
        let rig = try await RunningQueue<Int>(
            "expiry",
            .disconnected,
            clock: clock,
            policy: QueuePolicy(expiry: .seconds(60))
        ) { _ in }
        try await rig.queue.enqueue(1, key: "soon", expiresAfter: .seconds(10))
        try await rig.queue.enqueue(2, key: "later")
        try await rig.queue.enqueue(3, key: "much-later", expiresAfter: .seconds(3_600))
        try await advance(clock, of: rig.queue, until: "the first expired", step: .seconds(1)) {
            (try? await rig.queue.stats().dead) == 1
        }
        try await advance(clock, of: rig.queue, until: "the queue's own expiry", step: .seconds(1)) {
            (try? await rig.queue.stats().dead) == 2
        }
        let dead = try await rig.queue.deadLetters()
        #expect(dead.map(\.key) == ["soon", "later"])
        #expect(dead.map(\.reason) == [.expired, .expired])
        #expect(dead.map(\.attempts) == [0, 0], "expired untried: the service was never connected")
        #expect(
            dead.map(\.diedAt) == [
                clock.wallTimeAtStart.advanced(by: .seconds(10)), clock.wallTimeAtStart.advanced(by: .seconds(60)),
            ]
        )
        #expect(try await rig.queue.stats().pending == 1, "the item with an hour to live still waits")
        await rig.stop()
    }

    @Test func deadLettersCanBeRetriedDroppedAndPurged() async throws {
        let clock = TestClock()
        let rejecting = Mutex(true)
        let delivered = Collected<String>()
        let rig = try await RunningQueue<Int>("dead", clock: clock) { delivery in
            if rejecting.withLock({ $0 }) { throw DeliveryFailure.permanent("400: the server refused it") }
            delivered.append(delivery.key)
        }
        try await rig.queue.enqueue(contentsOf: [("a", 1), ("b", 2), ("c", 3)])
        try await waitUntil("all three dead") { (try? await rig.queue.stats().dead) == 3 }
        #expect(try await rig.queue.deadLetters().map(\.reason) == [.rejected, .rejected, .rejected])
        #expect(try await !rig.queue.enqueue(9, key: "a"), "a dead letter's key is still taken")

        // Retry: back to pending, delivered once the server takes it.
        rejecting.withLock { $0 = false }
        #expect(try await rig.queue.retryDeadLetter(key: "a"))
        try await waitUntil("a delivered") { delivered.all == ["a"] }
        #expect(try await !rig.queue.retryDeadLetter(key: "a"), "no longer a dead letter")

        // Drop: gone, its key free.
        #expect(try await rig.queue.dropDeadLetter(key: "b"))
        #expect(try await rig.queue.deadLetters().map(\.key) == ["c"])
        #expect(try await rig.queue.enqueue(2, key: "b"), "a dropped key can be used again")
        try await waitUntil("b delivered") { delivered.all == ["a", "b"] }

        // Purge: by age, then all.
        #expect(try await rig.queue.purgeDeadLetters(olderThan: .seconds(3_600)) == 0, "c died just now")
        clock.advance(by: .seconds(3_600))
        #expect(try await rig.queue.purgeDeadLetters(olderThan: .seconds(3_600)) == 1)
        #expect(try await rig.queue.stats().dead == 0)
        await rig.stop()
    }
}
