import FoundationEssentials
import Logging
import ReachKit
import ReachSupport
import Synchronization

/// A queue's deliveries: it starts items while connected and the circuit breaker admits them, up
/// to the policy's concurrency, hands each to the handler against its deadline, and records the
/// outcome in the store (delivered, retried later, or dead). ``DurableQueue`` runs one drain
/// whenever its loop wakes (``QueueAlarms``).
final class QueueDrain<Item: Codable & Sendable>: Sendable {
    private let name: String
    private let store: QueueStore
    private let service: any ConnectivityService
    private let policy: QueuePolicy
    private let handler: DurableQueue<Item>.Handler
    private let clock: MonitorClock
    private let logger: Logger
    private let metrics: QueueMetrics?
    private let alarms: QueueAlarms
    private let state: Mutex<State>

    private struct State {
        var breaker: BreakerMachine
        /// The deliveries whose handler runs, by item id.
        var inFlight: [Int64: Delivery] = [:]
        /// Graceful shutdown: no more deliveries start.
        var isStopping = false
    }

    /// A handler at work on one item, and why it was cancelled, once it was.
    private struct Delivery {
        let key: String
        var work: Task<Result<Void, any Error>, Never>?
        var interruption: Interruption?
    }

    enum Interruption {
        /// ``DurableQueue/cancel(key:)``: the item is gone; its outcome is not recorded.
        case withdrawn
        /// Connectivity was lost (``QueuePolicy/cancelsDeliveriesOnLoss``): no attempt is counted.
        case lost
        /// It overran its deadline: counted as a retryable failure when the deadline passed.
        case overran
    }

    /// What a slot of the drain ended with.
    private enum Slot: Sendable {
        case delivery
        case wakeUp
    }

    init(
        name: String,
        store: QueueStore,
        service: any ConnectivityService,
        policy: QueuePolicy,
        clock: MonitorClock,
        logger: Logger,
        metrics: QueueMetrics?,
        alarms: QueueAlarms,
        handler: @escaping DurableQueue<Item>.Handler
    ) {
        self.name = name
        self.store = store
        self.service = service
        self.policy = policy
        self.handler = handler
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        self.alarms = alarms
        self.state = Mutex(
            State(breaker: BreakerMachine(threshold: policy.breakerThreshold, cooldown: policy.breakerCooldown))
        )
    }

    /// The items whose handler runs now.
    var inFlight: [Int64] { Array(state.withLock { $0.inFlight.keys }) }

    var breakerPosition: BreakerMachine.Position { state.withLock { $0.breaker.position } }

    var isBreakerOpen: Bool { state.withLock { $0.breaker.isOpen } }

    var isStopping: Bool { state.withLock { $0.isStopping } }

    /// Connectivity was restored: the server deserves a fresh chance.
    func resetBreaker() {
        let position = state.withLock { state in
            state.breaker.reset()
            return state.breaker.position
        }
        metrics?.recordBreaker(position)
    }

    /// Graceful shutdown: nothing more starts.
    func stop() {
        state.withLock { $0.isStopping = true }
    }

    /// Cancels the deliveries under way whose item id `matches`, for `why`.
    func interrupt(_ why: Interruption, where matches: (Int64) -> Bool) {
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

    /// Starts items while connected and the breaker admits them; returns when nothing more can
    /// start (empty, offline, breaker open, nothing due) and what started has ended. What waits for
    /// its time is left to a wake-up (``QueueAlarms/wake(at:)``).
    func run() async {
        await withTaskGroup(of: Slot.self) { group in
            var running = 0
            // At concurrency above 1, a wake-up for the next item due, raced against the deliveries.
            var alarm: Task<Void, Never>?
            while !Task.isCancelled, !isStopping, service.isConnected {
                // The time the delays below count from: the breaker's and the next item's.
                let now = clock.uptime
                let (allowed, retryIn) = state.withLock {
                    $0.breaker.admit(at: now, limit: policy.concurrency)
                }
                if let retryIn, running == 0 {
                    alarms.wake(at: now + retryIn)
                    break
                }
                if running >= allowed {
                    guard running > 0 else { break }
                    if await group.next() == .delivery { running -= 1 }
                    continue
                }
                let next: NextItem
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
                case .due(let item):
                    state.withLock { $0.inFlight[item.id] = Delivery(key: item.key) }
                    running += 1
                    group.addTask {
                        await self.deliver(item)
                        return .delivery
                    }
                    continue
                case .waiting(let delay) where running == 0:
                    alarms.wake(at: now + delay)
                case .empty where running == 0:
                    break
                case .waiting(let delay):
                    // Deliveries run: wait for one of them, or for the next item's time.
                    if alarm == nil {
                        let clock = self.clock
                        let sleeping = Task { [now] in _ = try? await clock.sleep(untilUptime: now + delay) }
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
    }

    /// The next item to deliver. At concurrency 1 that is the oldest pending item, which may have
    /// to wait for its retry time; above, the oldest that is due, items waiting for their retry
    /// time passed over. Items in flight and items past their expiry (left to the expiry sweep) never are.
    private func nextItem() async throws -> NextItem {
        let now = clock.wallTime.secondsSinceEpoch
        // Further away than any backoff: the wall clock was set back since. Due now, not in an hour.
        return try await store.nextItem(
            queue: name,
            now: now,
            horizon: now + policy.retry.longest.seconds,
            inOrder: policy.concurrency == 1,
            excluding: inFlight
        )
    }

    /// Hands one item to the handler, against its deadline, and records the outcome. Returns when
    /// the outcome is recorded: at the handler's end, or at the deadline when the handler overran
    /// it (the item then stays out of the drain until the handler has ended).
    private func deliver(_ stored: StoredItem) async {
        let attempt = stored.attempts + 1
        let item: Item
        do {
            item = try JSONDecoder().decode(Item.self, from: stored.payload)
        } catch {
            await record(
                stored,
                attempt: attempt,
                failure: .permanent("cannot decode the stored item: \(error)"),
                took: .zero
            )
            release(stored)
            return
        }
        let delivery = QueuedItem(
            key: stored.key,
            item: item,
            attempt: attempt,
            enqueuedAt: WallTime(sinceEpoch: .seconds(stored.enqueuedAt))
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
        // A cancellation or a loss may have come between the item's choice and now.
        if state.withLock({ state in
            state.inFlight[stored.id]?.work = work
            return state.inFlight[stored.id]?.interruption != nil
        }) {
            work.cancel()
        }
        let started = ContinuousClock.now
        switch await work.value(within: policy.deliveryTimeout) {
        case .cancelled:
            // The queue's run was cancelled: no attempt is counted; the item is delivered at the next start.
            work.cancel()
            release(stored)
        case .expired:
            work.cancel()
            let interruption = state.withLock { state -> Interruption? in
                let earlier = state.inFlight[stored.id]?.interruption
                if earlier == nil { state.inFlight[stored.id]?.interruption = .overran }
                return earlier
            }
            if interruption == nil {
                logger.warning(
                    "queue \(name): \(stored.key) got no answer within \(policy.deliveryTimeout): cancelled, to be retried",
                    metadata: ["key": "\(stored.key)", "attempt": "\(attempt)"]
                )
                await record(
                    stored,
                    attempt: attempt,
                    failure: .retryable("no answer within \(policy.deliveryTimeout)"),
                    took: policy.deliveryTimeout
                )
            }
            // Not handed over again while its handler may still be at work on it.
            Task {
                _ = await work.value
                self.release(stored)
                self.alarms.kick()
            }
        case .finished(let result):
            let interruption = state.withLock { $0.inFlight[stored.id]?.interruption }
            let took = ContinuousClock.now - started
            switch (result, interruption) {
            case (_, .withdrawn), (.failure, .lost):
                // Cancelled, or cut by a loss: nothing to record, no attempt counted.
                break
            case (.success, _):
                await record(stored, attempt: attempt, failure: nil, took: took)
            case (.failure(let failure as DeliveryFailure), _):
                await record(stored, attempt: attempt, failure: failure, took: took)
            case (.failure(let error), _):
                await record(stored, attempt: attempt, failure: .retryable(String(describing: error)), took: took)
            }
            // After the record: the drain must not choose the item again before its retry time is written.
            release(stored)
        }
    }

    /// The item's delivery has ended. One whose expiry passed meanwhile is expired now (the sweep
    /// left it alone while it was in flight).
    private func release(_ stored: StoredItem) {
        let expired = (stored.expiresAt ?? .infinity) <= clock.wallTime.secondsSinceEpoch
        state.withLock { state in
            state.inFlight[stored.id] = nil
            if expired { alarms.expiryPassed() }
        }
        if expired { alarms.kick() }
    }

    /// Writes a delivery's outcome: gone when delivered, else its attempts, its retry time, or its
    /// move to the dead letters.
    private func record(_ stored: StoredItem, attempt: Int, failure: DeliveryFailure?, took: Duration) async {
        do {
            guard let failure else {
                let position = state.withLock { state in
                    state.breaker.succeeded()
                    return state.breaker.position
                }
                metrics?.recordBreaker(position)
                try await store.delivered(stored.id)
                metrics?.delivery(took: took, outcome: .delivered)
                return
            }
            let now = clock.wallTime.secondsSinceEpoch
            let death: DeadLetterReason?
            if !failure.isRetryable {
                death = .rejected
            } else if attempt >= policy.maxAttempts {
                death = .exhausted
            } else if (stored.expiresAt ?? .infinity) <= now {
                death = .expired
            } else {
                death = nil
            }
            let opened = failure.isRetryable && state.withLock { $0.breaker.failed(at: clock.uptime) }
            if opened {
                metrics?.recordBreaker(breakerPosition)
                logger.warning(
                    "queue \(name): circuit breaker open after \(policy.breakerThreshold) consecutive failures: waiting for restoration or \(policy.breakerCooldown)",
                    metadata: ["reason": "\(failure.reason)"]
                )
            }
            try await store.failed(
                stored.id,
                attempts: attempt,
                notBefore: now + policy.retry.delay(afterFailures: attempt).seconds,
                death: death,
                at: now,
                reason: failure.reason
            )
            metrics?.delivery(took: took, outcome: death.map { .died($0, retryable: failure.isRetryable) } ?? .retried)
            if let death {
                logger.warning(
                    "queue \(name): \(stored.key) moved to the dead letters (\(death.rawValue)) after \(attempt) attempt\(attempt == 1 ? "" : "s")",
                    metadata: ["reason": "\(failure.reason)", "key": "\(stored.key)"]
                )
            }
        } catch {
            logger.error(
                "queue \(name): cannot record a delivery",
                metadata: ["error": "\(error)", "key": "\(stored.key)"]
            )
        }
    }
}
