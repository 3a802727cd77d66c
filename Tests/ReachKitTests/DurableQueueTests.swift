import Foundation
import GRDB
import ReachKit
import ReachKitTesting
import ReachTesting
import Synchronization
import Testing

@testable import ReachKitQueue

@Suite("A durable queue", .serialized)
struct DurableQueueTests {
    struct Upload: Codable, Sendable, Equatable {
        var number: Int
    }

    @Test func aThousandItemsEnqueuedOfflineDrainInOrderAfterRestoration() async throws {
        let directory = try TemporaryDirectory("order")
        let service = TestConnectivityService(.disconnected)
        let following = Task { try await service.run() }
        defer { following.cancel() }
        let delivered = Collected<Int>()
        let connectedAtDelivery = Collected<Bool>()
        let store = try await openStore("\(directory)/queue.sqlite")
        let queue = DurableQueue<Upload>(
            name: "uploads",
            store: store,
            service: service,
            logger: .quiet
        ) { delivery in
            connectedAtDelivery.append(service.isConnected)
            delivered.append(delivery.item.number)
        }
        let running = Task { await queue.run() }
        defer { running.cancel() }
        for batch in 0..<10 {
            try await queue.enqueue(
                contentsOf: (0..<100).map {
                    (key: "upload-\(batch * 100 + $0)", item: Upload(number: batch * 100 + $0))
                }
            )
        }
        #expect(
            try await queue.enqueue(Upload(number: 0), key: "upload-0") == false,
            "a key already queued is not queued twice"
        )
        #expect(try await queue.stats().pending == 1_000)
        #expect(delivered.count == 0, "nothing is delivered while disconnected")

        await service.connect()
        try await waitUntil("1,000 deliveries", timeout: .seconds(120)) { delivered.count >= 1_000 }
        #expect(delivered.all == Array(0..<1_000), "delivered once each, in enqueue order")
        #expect(!connectedAtDelivery.all.contains(false))
        try await waitUntil("an empty queue") { (try? await queue.stats().pending) == 0 }
        running.cancel()
        await running.value
        await closeStore(store)
    }

    @Test func itemsQueuedBeforeTheFirstVerdictDrainOnceItIsConnected() async throws {
        let directory = try TemporaryDirectory("first")
        let service = TestConnectivityService()
        let following = Task { try await service.run() }
        defer { following.cancel() }
        let delivered = Collected<Int>()
        let store = try await openStore("\(directory)/queue.sqlite")
        let queue = DurableQueue<Upload>(
            name: "uploads",
            store: store,
            service: service,
            logger: .quiet
        ) { delivered.append($0.item.number) }
        try await queue.enqueue(Upload(number: 7), key: "seven")
        let running = Task { await queue.run() }
        defer { running.cancel() }
        #expect(service.current.state == .unknown)
        // Leaving `unknown` is no restoration, yet what waits is delivered at once.
        #expect(await service.connect().isEmpty, "no callback ran")
        try await waitUntil("the item delivered") { delivered.count == 1 }
        #expect(delivered.all == [7])
        running.cancel()
        await running.value
        await closeStore(store)
    }

    @Test func retryableFailuresBackOffExponentiallyWithJitter() async throws {
        let clock = TestClock()
        let attempts = Collected<Duration>()
        let policy = QueuePolicy(
            retry: ReconnectBackoff(first: .seconds(1), longest: .seconds(4), jitter: true),
            breakerThreshold: 100
        )
        let (queue, finish) = try await runningQueue("backoff", clock: clock, policy: policy) { delivery in
            attempts.append(clock.now.offset)
            if delivery.attempt < 5 { throw DeliveryFailure.retryable("503 from the server") }
        }
        try await queue.enqueue(Upload(number: 1), key: "one")
        // The clock moves only while no delivery is under way: a failure is recorded (and its retry
        // time taken) at the clock's time of the attempt. The queue's other timers (the deadline, the
        // age gauge's refresh) sleep on the clock too, so a sleeper alone says nothing.
        let step = Duration.milliseconds(50)
        try await advance(clock, of: queue, until: "the fifth attempt", step: step, limit: 1_000) {
            attempts.count >= 5
        }
        let times = attempts.all
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        // Steps of 1, 2, 4 and 4 s (capped), each waited 50-100 %; the clock moves in 50 ms steps.
        for (gap, full) in zip(gaps, [1, 2, 4, 4].map { Duration.seconds($0) }) {
            #expect(gap >= full / 2 && gap <= full + step, "gap \(gap) for a step of \(full): \(gaps)")
        }
        try await waitUntil("the item delivered") { (try? await queue.stats().pending) == 0 }
        await finish()
    }

    @Test func aWallClockSetBackAnHourDoesNotHoldARetryBack() async throws {
        let clock = TestClock()
        let attempts = Collected<Duration>()
        let policy = QueuePolicy(
            retry: ReconnectBackoff(first: .seconds(2), longest: .seconds(2)),
            breakerThreshold: 100
        )
        let (queue, finish) = try await runningQueue("clock-back", clock: clock, policy: policy) { delivery in
            attempts.append(clock.now.offset)
            if delivery.attempt == 1 { throw DeliveryFailure.retryable("503 from the server") }
        }
        try await queue.enqueue(Upload(number: 1), key: "one")
        try await waitUntil("the first attempt recorded") {
            guard attempts.count == 1 else { return false }
            return (try? await queue.stats().inFlight) == 0
        }
        clock.setWallClock(by: .seconds(-3_600))
        let step = Duration.milliseconds(100)
        try await advance(clock, of: queue, until: "the retry", step: step, limit: 600) { attempts.count >= 2 }
        let gap = attempts.all.count == 2 ? attempts.all[1] - attempts.all[0] : nil
        #expect(
            gap.map { $0 <= .seconds(2) + step } == true,
            "retried after \(gap.map { "\($0)" } ?? "more than a minute") with the clock an hour back"
        )
        await finish()
    }

    /// A running queue on a fresh file, driven by `clock`, following a service that says connected;
    /// `finish` stops it and removes the file.
    private func runningQueue(
        _ label: String,
        clock: TestClock,
        policy: QueuePolicy,
        handler: @escaping DurableQueue<Upload>.Handler
    ) async throws -> (queue: DurableQueue<Upload>, finish: () async -> Void) {
        let directory = try TemporaryDirectory(label)
        let service = TestConnectivityService(.connected, clock: clock.monitorClock)
        let store = try await openStore("\(directory)/queue.sqlite")
        let queue = DurableQueue<Upload>(
            name: "uploads",
            store: store,
            service: service,
            policy: policy,
            clock: clock.monitorClock,
            logger: .quiet,
            handler: handler
        )
        let running = Task { await queue.run() }
        return (
            queue,
            {
                running.cancel()
                await running.value
                await closeStore(store)
                withExtendedLifetime((service, directory)) {}
            }
        )
    }

    @Test func theBreakerOpensAfterConsecutiveFailuresAndClosesOnRestorationOrCooldown() async throws {
        let directory = try TemporaryDirectory("breaker")
        let clock = TestClock()
        let service = TestConnectivityService(.connected, clock: clock.monitorClock)
        let following = Task { try await service.run() }
        defer { following.cancel() }
        let calls = Collected<Duration>()
        let healthy = Mutex(false)
        let policy = QueuePolicy(
            maxAttempts: 100,
            retry: ReconnectBackoff(first: .milliseconds(10), longest: .milliseconds(10)),
            breakerThreshold: 3,
            breakerCooldown: .seconds(60)
        )
        let store = try await openStore("\(directory)/queue.sqlite")
        let queue = DurableQueue<Upload>(
            name: "uploads",
            store: store,
            service: service,
            policy: policy,
            clock: clock.monitorClock,
            logger: .quiet
        ) { _ in
            calls.append(clock.now.offset)
            if !healthy.withLock({ $0 }) { throw DeliveryFailure.retryable("server down") }
        }
        let running = Task { await queue.run() }
        defer { running.cancel() }
        try await queue.enqueue(contentsOf: (0..<3).map { (key: "k\($0)", item: Upload(number: $0)) })

        // Three failures, 10 ms apart, open the breaker.
        try await advance(clock, of: queue, until: "three failures") { calls.count >= 3 }
        try await waitUntil("the breaker open") { (try? await queue.stats().isBreakerOpen) == true }
        clock.advance(by: .seconds(30))
        // The queue's one timer still (or again) asleep: had it woken, it would have tried an item
        // before arming its timer again.
        try await waitUntil("the queue's timer asleep") { clock.sleeperCount > 0 }
        #expect(calls.count == 3, "an open breaker lets nothing through before its cool-down")

        // A restoration closes it: draining resumes at once, and three more failures open it again.
        await service.disconnect()
        #expect(await service.connect().map(\.outcome) == [.succeeded], "the queue's restoration callback ran")
        // At once: the clock stands still until the queue has tried the head again (before that, its
        // sleeper on the clock is the cool-down's, which says nothing about the restoration).
        try await waitUntil("draining resumed") { calls.count >= 4 }
        try await advance(clock, of: queue, until: "three more failures") { calls.count >= 6 }
        try await waitUntil("the breaker open again") { (try? await queue.stats().isBreakerOpen) == true }

        // The cool-down lets one item through; its success closes the breaker and the rest follow.
        healthy.withLock { $0 = true }
        let opened = clock.now.offset
        try await advance(clock, of: queue, until: "the cool-down's trial", step: .seconds(1)) { calls.count >= 7 }
        #expect(calls.all[6] - opened >= .seconds(59), "the trial waits out the cool-down")
        try await waitUntil("every item delivered") { (try? await queue.stats().pending) == 0 }
        #expect(try await queue.stats().isBreakerOpen == false)
        running.cancel()
        await running.value
        await closeStore(store)
    }

    @Test func itemsThatFailPermanentlyOrTooOftenBecomeDeadLetters() async throws {
        let directory = try TemporaryDirectory("dead")
        let clock = TestClock()
        let service = TestConnectivityService(.connected, clock: clock.monitorClock)
        let delivered = Collected<String>()
        let policy = QueuePolicy(
            maxAttempts: 3,
            retry: ReconnectBackoff(first: .milliseconds(10), longest: .milliseconds(10)),
            breakerThreshold: 100
        )
        let store = try await openStore("\(directory)/queue.sqlite")
        let queue = DurableQueue<Upload>(
            name: "uploads",
            store: store,
            service: service,
            policy: policy,
            clock: clock.monitorClock,
            logger: .quiet
        ) { delivery in
            switch delivery.key {
            case "rejected": throw DeliveryFailure.permanent("400: malformed")
            case "flaky": throw URLError(.timedOut)
            default: delivered.append(delivery.key)
            }
        }
        let running = Task { await queue.run() }
        defer { running.cancel() }
        try await queue.enqueue(contentsOf: [
            ("rejected", Upload(number: 1)), ("flaky", Upload(number: 2)), ("fine", Upload(number: 3)),
        ])
        try await advance(clock, of: queue, until: "the good item delivered") { delivered.count == 1 }
        // The handler has run; the queue records the delivery after it returns.
        try await waitUntil("the delivery recorded") {
            (try? await queue.stats()).map { $0.pending + $0.inFlight } == 0
        }
        let dead = try await queue.deadLetters()
        #expect(dead.map(\.key) == ["rejected", "flaky"])
        #expect(
            dead.map(\.attempts) == [1, 3],
            "a permanent failure dies at once, a retryable one after its maximum attempts"
        )
        #expect(dead.map(\.reason) == [.rejected, .exhausted])
        #expect(dead.first?.lastError == "400: malformed")
        #expect(dead.last?.item == Upload(number: 2))
        let stats = try await queue.stats()
        #expect(stats.dead == 2 && stats.pending == 0 && stats.inFlight == 0)
        running.cancel()
        await running.value
        await closeStore(store)
    }

    @Test func aCorruptFileIsAnErrorNamingItAndIsKeptAside() async throws {
        let directory = try TemporaryDirectory("corrupt")
        let path = "\(directory)/queue.sqlite"
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(filePath: path))
        var thrown: QueueStoreError?
        do { _ = try await openStore(path) } catch let error as QueueStoreError { thrown = error }
        guard case .corrupt(let named, let movedTo, _) = thrown else {
            Issue.record("expected a corrupt-file error, got \(String(describing: thrown))")
            return
        }
        #expect(named == path)
        #expect("\(thrown!)".contains(path) && "\(thrown!)".contains(movedTo))
        #expect(FileManager.default.contents(atPath: movedTo) == garbage, "the bad file is kept as it was")
        let reopened = try await openStore(path)
        #expect(reopened.path == path, "opening again starts an empty store")
        await closeStore(reopened)
    }

    @Test func statsCountPendingAndTellTheOldestAge() async throws {
        let directory = try TemporaryDirectory("stats")
        let clock = TestClock()
        let store = try await openStore("\(directory)/queue.sqlite")
        let queue = DurableQueue<Upload>(
            name: "uploads",
            store: store,
            service: TestConnectivityService(clock: clock.monitorClock),
            clock: clock.monitorClock,
            logger: .quiet
        ) { _ in }
        #expect(try await queue.stats().oldestPendingAge == nil)
        try await queue.enqueue(Upload(number: 1), key: "a")
        clock.advance(by: .seconds(90))
        try await queue.enqueue(Upload(number: 2), key: "b")
        let stats = try await queue.stats()
        #expect(stats.pending == 2 && stats.inFlight == 0 && stats.dead == 0)
        #expect(stats.oldestPendingAge == .seconds(90))
        await closeStore(store)
    }
}

/// Advances `clock` in `step`s, letting `queue` act on each (until it has no delivery under way and
/// sleeps on the clock again), until `condition` holds.
func advance<Item: Codable & Sendable>(
    _ clock: TestClock,
    of queue: DurableQueue<Item>,
    until condition: String,
    step: Duration = .milliseconds(10),
    limit: Int = 2_000,
    _ check: () async -> Bool
) async throws {
    for _ in 0..<limit {
        if await check() { return }
        clock.advance(by: step)
        try await waitUntil("the queue asleep on the clock, or \(condition)") {
            if await check() { return true }
            guard clock.sleeperCount > 0 else { return false }
            return (try? await queue.stats().inFlight) == 0
        }
    }
    if await !check() { throw NeverHappened(condition: condition) }
}

struct NeverHappened: Error, CustomStringConvertible {
    let condition: String
    var description: String { "never happened: \(condition)" }
}

@Suite("A queue store")
struct QueueStoreTests {
    @Test func enqueuesCommitWithFullSynchronousWrites() async throws {
        let directory = try TemporaryDirectory("sync")
        let store = try await openStore("\(directory)/queue.sqlite")
        // 2 is FULL: each commit syncs the WAL before it returns.
        #expect(try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
        try await store.acknowledge { _ in }
        #expect(
            try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2,
            "acknowledgements set it back"
        )
        #expect(try await store.pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
        await closeStore(store)
    }

    /// Enqueues that arrive while a commit runs share the next one; each caller still learns
    /// whether its own item was new, and every item is on disk when its caller resumes.
    @Test func concurrentEnqueuesFromManyTasksAreAllDurableAndCountedOnce() async throws {
        let directory = try TemporaryDirectory("concurrent")
        let path = "\(directory)/queue.sqlite"
        let store = try await openStore(path)
        let queue = DurableQueue<DurableQueueTests.Upload>(
            name: "uploads",
            store: store,
            service: TestConnectivityService(.disconnected),
            logger: .quiet
        ) { _ in }
        // 400 callers, two per key: exactly one of each pair is new, whichever commits first.
        let added = try await withThrowingTaskGroup(of: Bool.self) { group in
            for caller in 0..<400 {
                group.addTask {
                    try await queue.enqueue(DurableQueueTests.Upload(number: caller % 200), key: "key-\(caller % 200)")
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(added.filter { $0 }.count == 200 && added.count == 400)
        #expect(try await queue.stats().pending == 200)
        await closeStore(store)
        await #expect(throws: DatabaseError.self, "a closed store refuses enqueues") {
            try await queue.enqueue(DurableQueueTests.Upload(number: 0), key: "late")
        }

        let reopened = try await openStore(path)
        let rows = try await reopened.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT key, payload FROM item WHERE queue = 'uploads' ORDER BY id").map {
                row -> (String, Data) in (row["key"], row["payload"])
            }
        }
        #expect(Set(rows.map(\.0)) == Set((0..<200).map { "key-\($0)" }))
        let numbers = try rows.map { try JSONDecoder().decode(DurableQueueTests.Upload.self, from: $0.1).number }
        #expect(zip(rows, numbers).allSatisfy { $0.0 == "key-\($1)" }, "each key holds its own item")
        await closeStore(reopened)
    }
}
