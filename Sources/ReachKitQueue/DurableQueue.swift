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
/// - ``enqueue(_:key:)`` returns once the item is on disk. The key makes enqueueing idempotent:
///   an item whose key is already queued is not queued twice.
/// - ``run()`` drains the queue at start (when connected), on every restoration the
///   ``ConnectivityService`` reports, and when items arrive while connected: in enqueue order, up
///   to ``QueuePolicy/concurrency`` at once. The queue is a swift-service-lifecycle `Service`: on
///   graceful shutdown it starts no more deliveries, lets those under way end and records them,
///   and returns; what was not delivered waits in the file for the next start.
/// - The handler's error decides: ``DeliveryFailure/permanent(_:)`` moves the item to the dead
///   letters; anything else is retried after an exponential backoff with jitter, up to
///   ``QueuePolicy/maxAttempts``, after which the item is a dead letter too. Nothing is dropped.
/// - A run of consecutive failures opens a circuit breaker (see ``QueuePolicy/breakerThreshold``).
/// - At-least-once: an item leaves the file only after its handler returned. A crash re-delivers
///   at most the items that were in flight, with their keys.
/// - Its counts and age are swift-metrics gauges (`reachkit_queue_pending`, `_in_flight`, `_dead`,
///   `_oldest_pending_age_seconds`, dimension `queue`) once the program bootstraps a metrics
///   backend before making the queue; until then they cost nothing.
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

    private struct State {
        var breaker: CircuitBreaker
        var inFlight: Set<Int64> = []
        /// A wake-up for the head item's retry time or the breaker's cool-down.
        var timer: Task<Void, Never>?
        /// Graceful shutdown: no more deliveries start.
        var isStopping = false
    }

    /// - Parameters:
    ///   - name: Names this queue in the store, the logs and the metrics.
    ///   - service: Says when connectivity is there and when it is restored.
    ///   - handler: Delivers one item. It runs only while connected, never twice at once for one item.
    public init(
        name: String, store: QueueStore, service: any ConnectivityService, policy: QueuePolicy = QueuePolicy(),
        clock: MonitorClock = .system(), logger: Logger, handler: @escaping Handler
    ) {
        self.name = name
        self.store = store
        self.service = service
        self.policy = policy
        self.handler = handler
        self.clock = clock
        self.logger = logger
        self.metrics = QueueMetrics(queue: name)
        self.state = Mutex(State(breaker: CircuitBreaker(threshold: policy.breakerThreshold, cooldown: policy.breakerCooldown)))
    }

    // MARK: Enqueueing

    /// Stores `item` under `key`; returns once it is durable on disk: `true`, or `false` when an
    /// item with this key is already queued (pending or dead), which is left as it was.
    @discardableResult
    public func enqueue(_ item: Item, key: String) async throws -> Bool {
        try await enqueue(contentsOf: [(key, item)]) == 1
    }

    /// Stores many items in one transaction (one disk flush for all); returns how many were new.
    @discardableResult
    public func enqueue(contentsOf items: [(key: String, item: Item)]) async throws -> Int {
        let rows = try items.map { (key: $0.key, payload: try encoder.encode($0.item)) }
        let added = try await store.insert(queue: name, rows, at: clock.wallTime.secondsSinceEpoch)
        if added > 0, service.isConnected { kick() }
        await updateMetrics()
        return added
    }

    // MARK: Reading

    /// Counts and the oldest waiting item's age.
    public func stats() async throws -> QueueStats {
        let name = self.name
        let (pending, dead, oldest) = try await store.pool.read { db in
            let pending = try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE queue = ? AND dead = 0", arguments: [name]) ?? 0
            let dead = try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE queue = ? AND dead = 1", arguments: [name]) ?? 0
            let oldest = try Double.fetchOne(db, sql: "SELECT min(enqueued_at) FROM item WHERE queue = ? AND dead = 0", arguments: [name])
            return (pending, dead, oldest)
        }
        let (inFlight, breakerOpen) = state.withLock { ($0.inFlight.count, $0.breaker.isOpen) }
        let age = oldest.map { max(.zero, Duration.seconds(clock.wallTime.secondsSinceEpoch - $0)) }
        return QueueStats(pending: pending - inFlight, inFlight: inFlight, dead: dead, oldestPendingAge: age, isBreakerOpen: breakerOpen)
    }

    /// The dead letters, oldest first, with why each died: for a person or a repair tool.
    public func deadLetters() async throws -> [DeadLetter<Item>] {
        let name = self.name
        let rows = try await store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT key, payload, attempts, last_error FROM item WHERE queue = ? AND dead = 1 ORDER BY id", arguments: [name])
                .map { row -> DeadLetter<Data> in DeadLetter(key: row["key"], item: row["payload"], attempts: row["attempts"], lastError: row["last_error"]) }
        }
        let decoder = JSONDecoder()
        return try rows.map { DeadLetter(key: $0.key, item: try decoder.decode(Item.self, from: $0.item), attempts: $0.attempts, lastError: $0.lastError) }
    }

    // MARK: Draining

    /// Drains when connected, on restoration and when items arrive, until graceful shutdown or
    /// until the calling task is cancelled. Call it once.
    ///
    /// It drains whenever the verdict is `connected`, including the first one after start (leaving
    /// `unknown` is no transition, yet the queue should not wait for a loss and a restoration); a
    /// restoration also closes the circuit breaker.
    ///
    /// On graceful shutdown it starts no more deliveries and returns once those under way have
    /// ended and been recorded. On cancellation it returns at once: a delivery it cancels counts no
    /// attempt, and the item is delivered at the next start.
    public func run() async {
        let restoration = service.onConnectivityRestored(named: "queue \(name)", timeout: nil) { [weak self] _ in
            guard let self else { return }
            state.withLock { $0.breaker.restored() }
            kick()
        }
        defer {
            restoration.remove()
            state.withLock { $0.timer?.cancel() }
        }
        await updateMetrics()
        kick()
        let verdicts = service.verdicts()
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await verdict in verdicts where verdict.isConnected { self.kick() }
            }
            await withGracefulShutdownHandler {
                for await _ in kicks.stream {
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

    /// Wakes ``run()`` after `delay` (the head's retry time, the breaker's cool-down).
    private func wake(after delay: Duration) {
        let clock = self.clock
        let continuation = kicks.continuation
        state.withLock { state in
            state.timer?.cancel()
            state.timer = Task {
                guard (try? await clock.sleep(for: delay)) != nil else { return }
                continuation.yield()
            }
        }
    }

    private struct Next: Sendable {
        let id: Int64
        let key: String
        let payload: Data
        let attempts: Int
        let enqueuedAt: Double
        let notBefore: Double
    }

    /// Starts items in order while connected and the breaker admits them; returns when nothing
    /// more can start (empty, offline, breaker open, head not due) and what started has ended.
    private func drain() async {
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            while !Task.isCancelled, !isStopping, service.isConnected {
                let (allowed, retryIn) = state.withLock { $0.breaker.admit(at: clock.uptime, limit: policy.concurrency) }
                if let retryIn, running == 0 {
                    wake(after: retryIn)
                    break
                }
                if running >= allowed {
                    guard running > 0 else { break }
                    await group.next()
                    running -= 1
                    continue
                }
                let next: Next?
                do {
                    next = try await nextItem()
                } catch {
                    logger.error("queue \(name): cannot read the store", metadata: ["error": "\(error)", "path": "\(store.path)"])
                    break
                }
                guard let next else {
                    if running == 0 { break }
                    await group.next()
                    running -= 1
                    continue
                }
                // Further away than any backoff: the wall clock was set back since. Due now, not in an hour.
                let remaining = next.notBefore - clock.wallTime.secondsSinceEpoch
                let wait = remaining > policy.retry.longest.seconds ? 0 : remaining
                if wait > 0 {
                    if running == 0 {
                        wake(after: .milliseconds(Int64((wait * 1000).rounded(.up))))
                        break
                    }
                    await group.next()
                    running -= 1
                    continue
                }
                state.withLock { _ = $0.inFlight.insert(next.id) }
                running += 1
                group.addTask { await self.deliver(next) }
            }
            await group.waitForAll()
        }
        await updateMetrics()
    }

    /// The oldest pending item not in flight.
    private func nextItem() async throws -> Next? {
        let name = self.name
        let excluded = Array(state.withLock { $0.inFlight })
        return try await store.pool.read { db in
            let marks = excluded.isEmpty ? "" : "AND id NOT IN (\(excluded.map { _ in "?" }.joined(separator: ",")))"
            let arguments = StatementArguments([name]) + StatementArguments(excluded)
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT id, key, payload, attempts, enqueued_at, not_before FROM item WHERE queue = ? AND dead = 0 \(marks) ORDER BY id LIMIT 1",
                    arguments: arguments)
            else { return nil }
            return Next(id: row["id"], key: row["key"], payload: row["payload"], attempts: row["attempts"], enqueuedAt: row["enqueued_at"], notBefore: row["not_before"])
        }
    }

    /// Hands one item to the handler and records the outcome.
    private func deliver(_ next: Next) async {
        defer { state.withLock { _ = $0.inFlight.remove(next.id) } }
        let attempt = next.attempts + 1
        let failure: DeliveryFailure?
        do {
            let item = try JSONDecoder().decode(Item.self, from: next.payload)
            do {
                try await handler(
                    QueuedItem(key: next.key, item: item, attempt: attempt, enqueuedAt: WallTime(sinceEpoch: .seconds(next.enqueuedAt))))
                failure = nil
            } catch let error as DeliveryFailure {
                failure = error
            } catch where error is CancellationError || Task.isCancelled {
                // The queue is stopping: no attempt is counted; the item is delivered at the next start.
                return
            } catch {
                failure = .retryable(String(describing: error))
            }
        } catch {
            failure = .permanent("cannot decode the stored item: \(error)")
        }
        do {
            try await record(next, attempt: attempt, failure: failure)
        } catch {
            logger.error("queue \(name): cannot record a delivery", metadata: ["error": "\(error)", "key": "\(next.key)"])
        }
    }

    private func record(_ next: Next, attempt: Int, failure: DeliveryFailure?) async throws {
        guard let failure else {
            state.withLock { $0.breaker.succeeded() }
            try await store.acknowledge { db in try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [next.id]) }
            return
        }
        let dies = !failure.isRetryable || attempt >= policy.maxAttempts
        if failure.isRetryable {
            let opened = state.withLock { $0.breaker.failed(at: clock.uptime) }
            if opened {
                logger.warning(
                    "queue \(name): circuit breaker open after \(policy.breakerThreshold) consecutive failures: waiting for restoration or \(policy.breakerCooldown)",
                    metadata: ["reason": "\(failure.reason)"])
            }
        }
        let notBefore = clock.wallTime.secondsSinceEpoch + policy.retry.delay(afterFailures: attempt).seconds
        let reason = failure.reason
        try await store.acknowledge { db in
            try db.execute(
                sql: "UPDATE item SET attempts = ?, not_before = ?, dead = ?, last_error = ? WHERE id = ?",
                arguments: [attempt, notBefore, dies, reason, next.id])
        }
        if dies {
            logger.warning(
                "queue \(name): \(next.key) moved to the dead letters after \(attempt) attempt\(attempt == 1 ? "" : "s")",
                metadata: ["reason": "\(failure.reason)", "key": "\(next.key)"])
        }
    }

    private func updateMetrics() async {
        guard let metrics, let stats = try? await stats() else { return }
        metrics.record(stats)
    }
}
