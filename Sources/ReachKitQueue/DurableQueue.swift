import Foundation
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
///   `ConnectivityService` reports, and when items arrive while connected: up to
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
    private let clock: MonitorClock
    private let logger: Logger
    private let metrics: QueueMetrics?
    private let alarms: QueueAlarms
    private let drain: QueueDrain<Item>
    private let encoder = JSONEncoder()
    /// When the oldest waiting item was enqueued (wall-clock seconds), as last counted.
    private let oldestEnqueuedAt = Mutex<Double?>(nil)

    /// How often the oldest item's age is recorded while the queue runs (and a metrics backend is
    /// in force): the gauge keeps growing through an outage, when no event would refresh it.
    static var ageRefreshInterval: Duration { .seconds(5) }

    /// - Parameters:
    ///   - name: Names this queue in the store, the logs and the metrics.
    ///   - store: The file that keeps the items (one may hold many queues).
    ///   - service: Says when connectivity is there and when it is restored.
    ///   - policy: Concurrency, retries, the breaker, deadlines and expiry.
    ///   - clock: Times retries, deadlines and expiries (a test clock in tests).
    ///   - logger: Where failures, dead letters and the breaker are logged.
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
        self.clock = clock
        self.logger = logger
        let metrics = QueueMetrics(queue: name)
        self.metrics = metrics
        let alarms = QueueAlarms(clock: clock)
        self.alarms = alarms
        self.drain = QueueDrain(
            name: name,
            store: store,
            service: service,
            policy: policy,
            clock: clock,
            logger: logger,
            metrics: metrics,
            alarms: alarms,
            handler: handler
        )
    }

    // MARK: Enqueueing

    /// Stores `item` under `key`; returns once it is durable on disk: `true`, or `false` when the
    /// queue already holds an item with this key (pending, in flight or dead), which is left as it
    /// was (see the idempotency window).
    ///
    /// - Parameters:
    ///   - item: What the handler will be given.
    ///   - key: Names the item while the queue holds it: the idempotency key.
    ///   - lifetime: How long it may wait to be delivered before it becomes a dead letter
    ///     (reason `expired`); `nil` takes the policy's ``QueuePolicy/expiry``.
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
            if let expiresAt { alarms.expiry(at: expiresAt) }
            if service.isConnected { alarms.kick() }
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
        guard let id = try await store.remove(queue: name, key: key, dead: false) else { return false }
        drain.interrupt(.withdrawn) { $0 == id }
        await updateMetrics()
        return true
    }

    /// Moves the dead letter with `key` back to the pending items, as if enqueued now: at the end
    /// of the queue, its attempts from zero, with as long to live as it had when first enqueued
    /// (if it had a limit). Returns whether there was such a dead letter.
    @discardableResult
    public func retryDeadLetter(key: String) async throws -> Bool {
        guard let revived = try await store.revive(queue: name, key: key, now: clock.wallTime.secondsSinceEpoch)
        else { return false }
        if let expiresAt = revived { alarms.expiry(at: expiresAt) }
        if service.isConnected { alarms.kick() }
        await updateMetrics()
        return true
    }

    /// Deletes the dead letter with `key`; returns whether there was one. The key is free again.
    @discardableResult
    public func dropDeadLetter(key: String) async throws -> Bool {
        let dropped = try await store.remove(queue: name, key: key, dead: true) != nil
        await updateMetrics()
        return dropped
    }

    /// Deletes the dead letters that died at least `age` ago (all of them when `nil`); returns how
    /// many. Their keys are free again.
    @discardableResult
    public func purgeDeadLetters(olderThan age: Duration? = nil) async throws -> Int {
        let before = age.map { clock.wallTime.secondsSinceEpoch - $0.seconds }
        let purged = try await store.purgeDeadLetters(queue: name, diedBefore: before)
        await updateMetrics()
        return purged
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
            isBreakerOpen: drain.isBreakerOpen
        )
    }

    /// The dead letters, oldest first, with why each died: for a person or a repair tool.
    public func deadLetters() async throws -> [DeadLetter<Item>] {
        let decoder = JSONDecoder()
        return try await store.deadLetters(queue: name).map { row in
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
        let running = drain.inFlight
        let (pending, dead, oldest) = try await store.counts(queue: name, excluding: running)
        return (pending, running.count, dead, oldest)
    }

    private func age(since enqueuedAt: Double?) -> Duration? {
        enqueuedAt.map { max(.zero, Duration.seconds(clock.wallTime.secondsSinceEpoch - $0)) }
    }

    // MARK: Running

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
            drain.resetBreaker()
            alarms.kick()
        }
        defer {
            restoration.remove()
            alarms.cancelAll()
        }
        // Whatever the file holds may have expired while the program was not running.
        alarms.expiryPassed()
        await updateMetrics()
        alarms.kick()
        let verdicts = service.verdicts()
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await verdict in verdicts {
                    if verdict.isConnected {
                        self.alarms.kick()
                    } else if verdict.state == .disconnected, self.policy.cancelsDeliveriesOnLoss {
                        self.drain.interrupt(.lost) { _ in true }
                    }
                }
            }
            if let metrics {
                group.addTask {
                    while (try? await self.clock.sleep(for: Self.ageRefreshInterval)) != nil {
                        metrics.recordOldestAge(self.age(since: self.oldestEnqueuedAt.withLock { $0 }))
                    }
                }
            }
            await withGracefulShutdownHandler {
                for await _ in alarms.kicks.stream {
                    await expire()
                    await drain.run()
                    await updateMetrics()
                    if Task.isCancelled || drain.isStopping { break }
                }
            } onGracefulShutdown: {
                self.stop()
            }
            group.cancelAll()
        }
    }

    /// Graceful shutdown: nothing more starts, and an idle ``run()`` wakes to see it.
    private func stop() {
        drain.stop()
        alarms.cancelWake()
        alarms.kick()
    }

    /// Moves the pending items whose time is up to the dead letters, connected or not; the ones in
    /// flight are left to finish (and expire if they fail). Then waits for the next expiry.
    private func expire() async {
        let now = clock.wallTime.secondsSinceEpoch
        guard alarms.isExpiryDue(at: now) else { return }
        do {
            let (expired, next) = try await store.expire(queue: name, now: now, excluding: drain.inFlight)
            alarms.nextExpiry(next)
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

    private func updateMetrics() async {
        guard let metrics, let counts = try? await count() else { return }
        oldestEnqueuedAt.withLock { $0 = counts.oldest }
        metrics.record(
            pending: counts.pending,
            inFlight: counts.inFlight,
            dead: counts.dead,
            oldestAge: age(since: counts.oldest),
            breaker: drain.breakerPosition
        )
    }
}
