import Foundation
import GRDB
import Logging
import ReachKit
import ReachPOSIX
import ReachSupport
import ServiceLifecycle
import Synchronization

/// Work that must survive being offline and the program restarting: items are kept in a SQLite
/// file (``QueueStore``) until a handler delivers them, and delivered when connectivity is restored.
///
/// - ``enqueue(_:key:expiresAfter:)`` returns once the item is on disk. The key makes enqueueing
///   idempotent (see the idempotency window, below).
/// - ``run()`` drains the queue at start (when connected), on every restoration the
///   ``ConnectivityService`` reports, and when items arrive while connected: up to
///   ``QueuePolicy/concurrency`` at once, in the order ``QueuePolicy`` describes. The queue is a
///   swift-service-lifecycle `Service`: on graceful shutdown it starts no more deliveries, lets
///   those under way end and records them, and returns; what was not delivered waits in the file
///   for the next start.
/// - Each delivery has a deadline (``QueuePolicy/deliveryTimeout``, 30 s): a handler still running
///   then is cancelled and counted as a retryable failure, so a hung request cannot stall the queue.
/// - The handler's error decides: ``DeliveryFailure/permanent(_:)`` moves the item to the dead
///   letters; anything else is retried after an exponential backoff with jitter, up to
///   ``QueuePolicy/maxAttempts``, after which the item is a dead letter too. An item that waits
///   past its expiry (``QueuePolicy/expiry``) becomes a dead letter as well. Nothing is dropped
///   unless a program says so: ``cancel(key:)``, ``dropDeadLetter(key:)``, ``purgeDeadLetters(olderThan:)``.
/// - A run of consecutive failures opens a circuit breaker (see ``QueuePolicy/breakerThreshold``).
/// - At-least-once: an item leaves the file only after its handler returned. A crash re-delivers
///   at most the items that were in flight, with their keys.
/// - Its counts, outcomes and delivery times are swift-metrics metrics (`reachkit_queue_…`,
///   dimension `queue`: see docs/reachkit.md) once the program bootstraps a metrics backend
///   before making the queue; until then they cost nothing.
///
/// ## The idempotency window
///
/// A key names one item for as long as the queue holds it: pending, in flight, or dead. While it
/// does, enqueueing the key again is refused (returns `false`) and leaves the item as it was. Once
/// the item is delivered, cancelled, or its dead letter dropped or purged, the key is free and a
/// new item may take it. So a server that must not apply one item twice should keep keys longer
/// than the queue does: at least until the item is acknowledged, which is when the queue forgets.
public final class DurableQueue<Item: Codable & Sendable>: Service {
    /// Delivers one item; returns when it is delivered, throws when it is not.
    public typealias Handler = @Sendable (QueuedItem<Item>) async throws -> Void

    /// Names the queue in its store (one file may hold several), the logs and the metrics.
    public let name: String
    private let store: QueueStore
    private let service: any ConnectivityService
    private let policy: QueuePolicy
    private let handler: Handler
    private let clock: MonitorClock
    private let logger: Logger
    private let metrics: QueueMetrics?
    private let kicks = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    private let encoder = JSONEncoder()
    private let state: Mutex<State>

    /// How often the oldest item's age is recorded while the queue runs (and a metrics backend is
    /// in force): the gauge keeps growing through an outage, when no event would refresh it.
    static var ageRefreshInterval: Duration { .seconds(5) }

    private struct State {
        var breaker: BreakerMachine
        /// The deliveries whose handler runs, by item id.
        var inFlight: [Int64: Delivery] = [:]
        /// A wake-up for the next item's retry time or the breaker's cool-down.
        var timer: Task<Void, Never>?
        /// A wake-up for the next expiry; `nil` once it fired.
        var expiryTimer: Task<Void, Never>?
        /// No pending item expires before this (wall-clock seconds); `nil`: none expires.
        var nextExpiry: Double?
        /// When the oldest waiting item was enqueued (wall-clock seconds), as last counted.
        var oldestEnqueuedAt: Double?
        /// Graceful shutdown: no more deliveries start.
        var isStopping = false
    }

    /// A handler at work on one item, and why it was cancelled, once it was.
    private struct Delivery {
        let key: String
        var work: Task<Result<Void, any Error>, Never>?
        var interruption: Interruption?
    }

    private enum Interruption {
        /// ``cancel(key:)``: the item is gone; its outcome is not recorded.
        case withdrawn
        /// Connectivity was lost (``QueuePolicy/cancelsDeliveriesOnLoss``): no attempt is counted.
        case lost
        /// It overran its deadline: counted as a retryable failure when the deadline passed.
        case overran
    }

    /// - Parameters:
    ///   - name: Names this queue in the store, the logs and the metrics.
    ///   - service: Says when connectivity is there and when it is restored.
    ///   - handler: Delivers one item. It runs only while connected, never twice at once for one item.
    public init(
        name: String,
        store: QueueStore,
        service: any ConnectivityService,
        policy: QueuePolicy = QueuePolicy(),
        clock: MonitorClock = .system(),
        logger: Logger,
        handler: @escaping Handler
    ) {
        self.name = name
        self.store = store
        self.service = service
        self.policy = policy
        self.handler = handler
        self.clock = clock
        self.logger = logger
        self.metrics = QueueMetrics(queue: name)
        self.state = Mutex(
            State(breaker: BreakerMachine(threshold: policy.breakerThreshold, cooldown: policy.breakerCooldown))
        )
    }

    // MARK: Enqueueing

    /// Stores `item` under `key`; returns once it is durable on disk: `true`, or `false` when the
    /// queue already holds an item with this key (pending, in flight or dead), which is left as it
    /// was (see the idempotency window).
    ///
    /// - Parameter lifetime: How long it may wait to be delivered before it becomes a dead letter
    ///   (reason `expired`); `nil` takes the policy's ``QueuePolicy/expiry``.
    @discardableResult
    public func enqueue(_ item: Item, key: String, expiresAfter lifetime: Duration? = nil) async throws -> Bool {
        try await enqueue([(key, item)], expiresAfter: lifetime ?? policy.expiry) == 1
    }

    /// Stores many items in one transaction (one disk flush for all), each with the policy's
    /// expiry; returns how many were new.
    @discardableResult
    public func enqueue(contentsOf items: [(key: String, item: Item)]) async throws -> Int {
        try await enqueue(items, expiresAfter: policy.expiry)
    }

    private func enqueue(_ items: [(key: String, item: Item)], expiresAfter lifetime: Duration?) async throws -> Int {
        let rows = try items.map { (key: $0.key, payload: try encoder.encode($0.item)) }
        let now = clock.wallTime.secondsSinceEpoch
        let expiresAt = lifetime.map { now + $0.seconds }
        let added = try await store.insert(queue: name, rows, at: now, expiresAt: expiresAt)
        if added > 0 {
            if let expiresAt { expiry(at: expiresAt) }
            if service.isConnected { kick() }
        }
        await updateMetrics()
        return added
    }

    // MARK: Managing

    /// Removes the pending item with `key`, so that it is never delivered; returns whether there
    /// was one. An item in flight is removed too, and its handler cancelled: what the handler did
    /// before it saw the cancellation is not undone. Dead letters are not touched (see
    /// ``dropDeadLetter(key:)``). The key is free again afterwards.
    @discardableResult
    public func cancel(key: String) async throws -> Bool {
        guard let id = try await remove(key: key, dead: false) else { return false }
        interrupt(.withdrawn) { $0 == id }
        await updateMetrics()
        return true
    }

    /// Moves the dead letter with `key` back to the pending items, as if enqueued now: at the end
    /// of the queue, its attempts from zero, with as long to live as it had when first enqueued
    /// (if it had a limit). Returns whether there was such a dead letter.
    @discardableResult
    public func retryDeadLetter(key: String) async throws -> Bool {
        let (name, now) = (self.name, clock.wallTime.secondsSinceEpoch)
        let revived: Double?? = try await store.acknowledge { db in
            try db.execute(
                sql: """
                    UPDATE item SET id = (SELECT max(id) + 1 FROM item), dead = 0, dead_reason = NULL, died_at = NULL, attempts = 0,
                        not_before = 0, last_error = NULL, expires_at = ? + expires_at - enqueued_at, enqueued_at = ?
                    WHERE queue = ? AND key = ? AND dead = 1
                    """,
                arguments: [now, now, name, key]
            )
            guard db.changesCount > 0 else { return nil }
            return .some(
                try Double.fetchOne(
                    db,
                    sql: "SELECT expires_at FROM item WHERE queue = ? AND key = ?",
                    arguments: [name, key]
                )
            )
        }
        guard let revived else { return false }
        if let expiresAt = revived { expiry(at: expiresAt) }
        if service.isConnected { kick() }
        await updateMetrics()
        return true
    }

    /// Deletes the dead letter with `key`; returns whether there was one. The key is free again.
    @discardableResult
    public func dropDeadLetter(key: String) async throws -> Bool {
        let dropped = try await remove(key: key, dead: true) != nil
        await updateMetrics()
        return dropped
    }

    /// Deletes the dead letters that died at least `age` ago (all of them when `nil`); returns how
    /// many. Their keys are free again.
    @discardableResult
    public func purgeDeadLetters(olderThan age: Duration? = nil) async throws -> Int {
        let (name, before) = (self.name, age.map { clock.wallTime.secondsSinceEpoch - $0.seconds })
        let purged = try await store.acknowledge { db in
            try db.execute(
                sql: "DELETE FROM item WHERE queue = ? AND dead = 1 AND (? IS NULL OR died_at <= ?)",
                arguments: [name, before, before]
            )
            return db.changesCount
        }
        await updateMetrics()
        return purged
    }

    /// Deletes the item with `key`, pending or dead; returns its id, or `nil` when there was none.
    private func remove(key: String, dead: Bool) async throws -> Int64? {
        let name = self.name
        return try await store.acknowledge { db in
            let id = try Int64.fetchOne(
                db,
                sql: "SELECT id FROM item WHERE queue = ? AND key = ? AND dead = ?",
                arguments: [name, key, dead]
            )
            if let id { try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [id]) }
            return id
        }
    }

    // MARK: Reading

    /// Counts and the oldest waiting item's age, computed at the call.
    public func stats() async throws -> QueueStats {
        let counts = try await count()
        return QueueStats(
            pending: counts.pending,
            inFlight: counts.inFlight,
            dead: counts.dead,
            oldestPendingAge: age(since: counts.oldest),
            isBreakerOpen: state.withLock { $0.breaker.isOpen }
        )
    }

    /// The dead letters, oldest first, with why each died: for a person or a repair tool.
    public func deadLetters() async throws -> [DeadLetter<Item>] {
        let name = self.name
        let rows = try await store.pool.read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT key, payload, attempts, last_error, dead_reason, died_at FROM item WHERE queue = ? AND dead = 1 ORDER BY died_at, id",
                arguments: [name]
            ).map {
                row -> (key: String, payload: Data, attempts: Int, lastError: String?, reason: String?, diedAt: Double?)
                in
                (row["key"], row["payload"], row["attempts"], row["last_error"], row["dead_reason"], row["died_at"])
            }
        }
        let decoder = JSONDecoder()
        return try rows.map { row in
            DeadLetter(
                key: row.key,
                item: try decoder.decode(Item.self, from: row.payload),
                reason: row.reason.flatMap { DeadLetterReason(rawValue: $0) } ?? .rejected,
                attempts: row.attempts,
                lastError: row.lastError,
                diedAt: WallTime(sinceEpoch: .seconds(row.diedAt ?? 0))
            )
        }
    }

    /// The store's counts, the deliveries under way excluded from the pending ones.
    private func count() async throws -> (pending: Int, inFlight: Int, dead: Int, oldest: Double?) {
        let name = self.name
        let running = Array(state.withLock { $0.inFlight.keys })
        let (pending, dead, oldest) = try await store.pool.read { db in
            let pending =
                try Int.fetchOne(
                    db,
                    sql: "SELECT count(*) FROM item WHERE queue = ? AND dead = 0 \(Self.excluding(running))",
                    arguments: StatementArguments([name]) + StatementArguments(running)
                ) ?? 0
            let dead =
                try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE queue = ? AND dead = 1", arguments: [name])
                ?? 0
            let oldest = try Double.fetchOne(
                db,
                sql: "SELECT min(enqueued_at) FROM item WHERE queue = ? AND dead = 0",
                arguments: [name]
            )
            return (pending, dead, oldest)
        }
        return (pending, running.count, dead, oldest)
    }

    /// `AND id NOT IN (?, …)` for `ids`, or nothing when there are none.
    private static func excluding(_ ids: [Int64]) -> String {
        ids.isEmpty ? "" : "AND id NOT IN (\(ids.map { _ in "?" }.joined(separator: ",")))"
    }

    private func age(since enqueuedAt: Double?) -> Duration? {
        enqueuedAt.map { max(.zero, Duration.seconds(clock.wallTime.secondsSinceEpoch - $0)) }
    }

    // MARK: Draining

    /// Drains when connected, on restoration and when items arrive, and expires what waited too
    /// long, until graceful shutdown or until the calling task is cancelled. Call it once.
    ///
    /// It drains whenever the verdict is `connected`, including the first one after start (leaving
    /// `unknown` is no transition, yet the queue should not wait for a loss and a restoration); a
    /// restoration also closes the circuit breaker.
    ///
    /// On graceful shutdown it starts no more deliveries and returns once those under way have
    /// ended (or reached their deadline) and been recorded. On cancellation it returns at once: a
    /// delivery it cancels counts no attempt, and the item is delivered at the next start.
    public func run() async {
        let restoration = service.onConnectivityRestored(named: "queue \(name)", timeout: nil) { [weak self] _ in
            guard let self else { return }
            let position = state.withLock { state in
                state.breaker.reset()
                return state.breaker.position
            }
            metrics?.recordBreaker(position)
            kick()
        }
        defer {
            restoration.remove()
            state.withLock { state in
                state.timer?.cancel()
                state.expiryTimer?.cancel()
            }
        }
        // Whatever the file holds may have expired while the program was not running.
        state.withLock { $0.nextExpiry = -.infinity }
        await updateMetrics()
        kick()
        let verdicts = service.verdicts()
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await verdict in verdicts {
                    if verdict.isConnected {
                        self.kick()
                    } else if verdict.state == .disconnected, self.policy.cancelsDeliveriesOnLoss {
                        self.interrupt(.lost) { _ in true }
                    }
                }
            }
            if let metrics {
                group.addTask {
                    while (try? await self.clock.sleep(for: Self.ageRefreshInterval)) != nil {
                        metrics.recordOldestAge(self.age(since: self.state.withLock { $0.oldestEnqueuedAt }))
                    }
                }
            }
            await withGracefulShutdownHandler {
                for await _ in kicks.stream {
                    await expire()
                    await drain()
                    if Task.isCancelled || isStopping { break }
                }
            } onGracefulShutdown: {
                self.stop()
            }
            group.cancelAll()
        }
    }

    private func kick() { kicks.continuation.yield() }

    private var isStopping: Bool { state.withLock { $0.isStopping } }

    /// Graceful shutdown: nothing more starts, and an idle ``run()`` wakes to see it.
    private func stop() {
        state.withLock { state in
            state.isStopping = true
            state.timer?.cancel()
        }
        kick()
    }

    /// Wakes ``run()`` after `delay` (the next item's retry time, the breaker's cool-down).
    private func wake(after delay: Duration) {
        let (clock, continuation) = (self.clock, kicks.continuation)
        state.withLock { state in
            state.timer?.cancel()
            state.timer = Task<Void, Never>.after(delay, sleep: { try await clock.sleep(for: $0) }) {
                continuation.yield()
            }
        }
    }

    /// Cancels the deliveries under way whose item id `matches`, for `why`.
    private func interrupt(_ why: Interruption, where matches: (Int64) -> Bool) {
        let cancelled = state.withLock { state in
            var cancelled: [Task<Result<Void, any Error>, Never>] = []
            for (id, delivery) in state.inFlight where matches(id) && delivery.interruption == nil {
                state.inFlight[id]?.interruption = why
                if let work = delivery.work { cancelled.append(work) }
            }
            return cancelled
        }
        for work in cancelled { work.cancel() }
    }

    // MARK: Expiring

    /// An item expires at `time` (wall-clock seconds): wake then, unless something expires sooner.
    private func expiry(at time: Double) {
        let sooner = state.withLock { state in
            guard state.nextExpiry.map({ time < $0 }) ?? true else { return false }
            state.nextExpiry = time
            return true
        }
        if sooner { armExpiryTimer() }
    }

    private func armExpiryTimer() {
        let (clock, continuation) = (self.clock, kicks.continuation)
        state.withLock { state in
            state.expiryTimer?.cancel()
            state.expiryTimer = nil
            guard let at = state.nextExpiry else { return }
            // At most a minute: a wall clock set back delays an expiry by no more than that.
            let delay = Duration.seconds(min(60, max(0, at - clock.wallTime.secondsSinceEpoch)))
            state.expiryTimer = Task<Void, Never>.after(delay, sleep: { try await clock.sleep(for: $0) }) {
                [weak self] in
                self?.state.withLock { $0.expiryTimer = nil }
                continuation.yield()
            }
        }
    }

    /// Moves the pending items whose time is up to the dead letters, connected or not; the ones in
    /// flight are left to finish (and expire if they fail). Then waits for the next expiry.
    private func expire() async {
        let now = clock.wallTime.secondsSinceEpoch
        let (due, timerSet) = state.withLock { state in
            (state.nextExpiry.map { $0 <= now } ?? false, state.expiryTimer != nil)
        }
        guard due else {
            if !timerSet { armExpiryTimer() }
            return
        }
        let name = self.name
        let running = Array(state.withLock { $0.inFlight.keys })
        do {
            let (expired, next) = try await store.acknowledge { db in
                try db.execute(
                    sql: """
                        UPDATE item SET dead = 1, dead_reason = 'expired', died_at = ?
                        WHERE queue = ? AND dead = 0 AND expires_at <= ? \(Self.excluding(running))
                        """,
                    arguments: [now, name, now] + StatementArguments(running)
                )
                let expired = db.changesCount
                let next = try Double.fetchOne(
                    db,
                    sql: "SELECT min(expires_at) FROM item WHERE queue = ? AND dead = 0 AND expires_at > ?",
                    arguments: [name, now]
                )
                return (expired, next)
            }
            state.withLock { $0.nextExpiry = next }
            armExpiryTimer()
            if expired > 0 {
                logger.warning(
                    "queue \(name): \(expired) item\(expired == 1 ? "" : "s") expired undelivered and moved to the dead letters"
                )
                metrics?.expired(expired)
                await updateMetrics()
            }
        } catch {
            logger.error(
                "queue \(name): cannot expire items",
                metadata: ["error": "\(error)", "path": "\(store.path)"]
            )
        }
    }

    // MARK: Delivering

    private struct Pending: Sendable {
        let id: Int64
        let key: String
        let payload: Data
        let attempts: Int
        let enqueuedAt: Double
        let expiresAt: Double?
    }

    private enum Next: Sendable {
        case due(Pending)
        /// Nothing may start before this.
        case waiting(Duration)
        case empty
    }

    /// What a slot of the drain ended with.
    private enum Slot: Sendable {
        case delivery
        case wakeUp
    }

    /// Starts items while connected and the breaker admits them; returns when nothing more can
    /// start (empty, offline, breaker open, nothing due) and what started has ended.
    private func drain() async {
        await withTaskGroup(of: Slot.self) { group in
            var running = 0
            // At concurrency above 1, a wake-up for the next item due, raced against the deliveries.
            var alarm: Task<Void, Never>?
            while !Task.isCancelled, !isStopping, service.isConnected {
                let (allowed, retryIn) = state.withLock {
                    $0.breaker.admit(at: clock.uptime, limit: policy.concurrency)
                }
                if let retryIn, running == 0 {
                    wake(after: retryIn)
                    break
                }
                if running >= allowed {
                    guard running > 0 else { break }
                    if await group.next() == .delivery { running -= 1 }
                    continue
                }
                let next: Next
                do {
                    next = try await nextItem()
                } catch {
                    logger.error(
                        "queue \(name): cannot read the store",
                        metadata: ["error": "\(error)", "path": "\(store.path)"]
                    )
                    break
                }
                switch next {
                case .due(let pending):
                    state.withLock { $0.inFlight[pending.id] = Delivery(key: pending.key) }
                    running += 1
                    group.addTask {
                        await self.deliver(pending)
                        return .delivery
                    }
                    continue
                case .waiting(let delay) where running == 0:
                    wake(after: delay)
                case .empty where running == 0:
                    break
                case .waiting(let delay):
                    // Deliveries run: wait for one of them, or for the next item's time.
                    if alarm == nil {
                        let clock = self.clock
                        let sleeping = Task { _ = try? await clock.sleep(for: delay) }
                        alarm = sleeping
                        group.addTask {
                            await sleeping.value
                            return .wakeUp
                        }
                    }
                    switch await group.next() {
                    case .delivery: running -= 1
                    case .wakeUp, nil: alarm = nil
                    }
                    continue
                case .empty:
                    if await group.next() == .delivery { running -= 1 }
                    continue
                }
                break
            }
            alarm?.cancel()
            await group.waitForAll()
        }
        await updateMetrics()
    }

    /// The next item to deliver. At concurrency 1 that is the oldest pending item, which may have
    /// to wait for its retry time; above, the oldest that is due, items waiting for their retry
    /// time passed over. Items in flight and items past their expiry (left to ``expire()``) never are.
    private func nextItem() async throws -> Next {
        let (name, now) = (self.name, clock.wallTime.secondsSinceEpoch)
        let running = Array(state.withLock { $0.inFlight.keys })
        // Further away than any backoff: the wall clock was set back since. Due now, not in an hour.
        let horizon = now + policy.retry.longest.seconds
        let inOrder = policy.concurrency == 1
        return try await store.pool.read { db in
            let live = "queue = ? AND dead = 0 AND (expires_at IS NULL OR expires_at > ?) \(Self.excluding(running))"
            let arguments: StatementArguments = [name, now] + StatementArguments(running)
            let due = inOrder ? "" : "AND (not_before <= ? OR not_before > ?)"
            let row = try Row.fetchOne(
                db,
                sql:
                    "SELECT id, key, payload, attempts, enqueued_at, not_before, expires_at FROM item WHERE \(live) \(due) ORDER BY id LIMIT 1",
                arguments: inOrder ? arguments : arguments + [now, horizon] as StatementArguments
            )
            guard let row else {
                guard !inOrder,
                    let soonest = try Double.fetchOne(
                        db,
                        sql: "SELECT min(not_before) FROM item WHERE \(live)",
                        arguments: arguments
                    )
                else {
                    return .empty
                }
                return .waiting(.milliseconds(Int64(((soonest - now) * 1000).rounded(.up))))
            }
            let notBefore: Double = row["not_before"]
            let wait = notBefore > horizon ? 0 : notBefore - now
            guard wait <= 0 else { return .waiting(.milliseconds(Int64((wait * 1000).rounded(.up)))) }
            return .due(
                Pending(
                    id: row["id"],
                    key: row["key"],
                    payload: row["payload"],
                    attempts: row["attempts"],
                    enqueuedAt: row["enqueued_at"],
                    expiresAt: row["expires_at"]
                )
            )
        }
    }

    /// Hands one item to the handler, against its deadline, and records the outcome. Returns when
    /// the outcome is recorded: at the handler's end, or at the deadline when the handler overran
    /// it (the item then stays out of the drain until the handler has ended).
    private func deliver(_ pending: Pending) async {
        let attempt = pending.attempts + 1
        let item: Item
        do {
            item = try JSONDecoder().decode(Item.self, from: pending.payload)
        } catch {
            await record(
                pending,
                attempt: attempt,
                failure: .permanent("cannot decode the stored item: \(error)"),
                took: .zero
            )
            release(pending)
            return
        }
        let delivery = QueuedItem(
            key: pending.key,
            item: item,
            attempt: attempt,
            enqueuedAt: WallTime(sinceEpoch: .seconds(pending.enqueuedAt))
        )
        let handler = self.handler
        let work = Task { () -> Result<Void, any Error> in
            do {
                try await handler(delivery)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        // cancel(key:) or a loss may have come between the item's choice and now.
        if state.withLock({ state in
            state.inFlight[pending.id]?.work = work
            return state.inFlight[pending.id]?.interruption != nil
        }) {
            work.cancel()
        }
        let started = ContinuousClock.now
        switch await work.value(within: policy.deliveryTimeout) {
        case .cancelled:
            // run() was cancelled: no attempt is counted; the item is delivered at the next start.
            work.cancel()
            release(pending)
        case .expired:
            work.cancel()
            let interruption = state.withLock { state -> Interruption? in
                let earlier = state.inFlight[pending.id]?.interruption
                if earlier == nil { state.inFlight[pending.id]?.interruption = .overran }
                return earlier
            }
            if interruption == nil {
                logger.warning(
                    "queue \(name): \(pending.key) got no answer within \(policy.deliveryTimeout): cancelled, to be retried",
                    metadata: ["key": "\(pending.key)", "attempt": "\(attempt)"]
                )
                await record(
                    pending,
                    attempt: attempt,
                    failure: .retryable("no answer within \(policy.deliveryTimeout)"),
                    took: policy.deliveryTimeout
                )
            }
            // Not handed over again while its handler may still be at work on it.
            Task {
                _ = await work.value
                self.release(pending)
                self.kick()
            }
        case .finished(let result):
            let interruption = state.withLock { $0.inFlight[pending.id]?.interruption }
            let took = ContinuousClock.now - started
            switch (result, interruption) {
            case (_, .withdrawn), (.failure, .lost):
                // Cancelled, or cut by a loss: nothing to record, no attempt counted.
                break
            case (.success, _):
                await record(pending, attempt: attempt, failure: nil, took: took)
            case (.failure(let failure as DeliveryFailure), _):
                await record(pending, attempt: attempt, failure: failure, took: took)
            case (.failure(let error), _):
                await record(pending, attempt: attempt, failure: .retryable(String(describing: error)), took: took)
            }
            // After the record: the drain must not choose the item again before its retry time is written.
            release(pending)
        }
    }

    /// The item's delivery has ended. One whose expiry passed meanwhile is expired now (the sweep
    /// left it alone while it was in flight).
    private func release(_ pending: Pending) {
        let expired = (pending.expiresAt ?? .infinity) <= clock.wallTime.secondsSinceEpoch
        state.withLock { state in
            state.inFlight[pending.id] = nil
            if expired { state.nextExpiry = -.infinity }
        }
        if expired { kick() }
    }

    /// Writes a delivery's outcome: gone when delivered, else its attempts, its retry time, or its
    /// move to the dead letters.
    private func record(_ pending: Pending, attempt: Int, failure: DeliveryFailure?, took: Duration) async {
        do {
            guard let failure else {
                let position = state.withLock { state in
                    state.breaker.succeeded()
                    return state.breaker.position
                }
                metrics?.recordBreaker(position)
                try await store.acknowledge { db in
                    try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [pending.id])
                }
                metrics?.delivery(took: took, outcome: .delivered)
                return
            }
            let now = clock.wallTime.secondsSinceEpoch
            let death: DeadLetterReason?
            if !failure.isRetryable {
                death = .rejected
            } else if attempt >= policy.maxAttempts {
                death = .exhausted
            } else if (pending.expiresAt ?? .infinity) <= now {
                death = .expired
            } else {
                death = nil
            }
            let opened = failure.isRetryable && state.withLock { $0.breaker.failed(at: clock.uptime) }
            if opened {
                let position = state.withLock { $0.breaker.position }
                metrics?.recordBreaker(position)
                logger.warning(
                    "queue \(name): circuit breaker open after \(policy.breakerThreshold) consecutive failures: waiting for restoration or \(policy.breakerCooldown)",
                    metadata: ["reason": "\(failure.reason)"]
                )
            }
            let notBefore = now + policy.retry.delay(afterFailures: attempt).seconds
            let reason = failure.reason
            try await store.acknowledge { db in
                try db.execute(
                    sql:
                        "UPDATE item SET attempts = ?, not_before = ?, dead = ?, dead_reason = ?, died_at = ?, last_error = ? WHERE id = ?",
                    arguments: [
                        attempt, notBefore, death != nil, death?.rawValue, death.map { _ in now }, reason, pending.id,
                    ]
                )
            }
            metrics?.delivery(took: took, outcome: death.map { .died($0, retryable: failure.isRetryable) } ?? .retried)
            if let death {
                logger.warning(
                    "queue \(name): \(pending.key) moved to the dead letters (\(death.rawValue)) after \(attempt) attempt\(attempt == 1 ? "" : "s")",
                    metadata: ["reason": "\(failure.reason)", "key": "\(pending.key)"]
                )
            }
        } catch {
            logger.error(
                "queue \(name): cannot record a delivery",
                metadata: ["error": "\(error)", "key": "\(pending.key)"]
            )
        }
    }

    private func updateMetrics() async {
        guard let metrics, let counts = try? await count() else { return }
        let position = state.withLock { state in
            state.oldestEnqueuedAt = counts.oldest
            return state.breaker.position
        }
        metrics.record(
            pending: counts.pending,
            inFlight: counts.inFlight,
            dead: counts.dead,
            oldestAge: age(since: counts.oldest),
            breaker: position
        )
    }
}
