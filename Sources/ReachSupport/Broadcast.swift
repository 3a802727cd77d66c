import DequeModule
import Synchronization

/// Latest-wins fan-out to any number of subscribers, each reading at its own pace from one shared
/// window of recent values.
///
/// A subscriber is a position in that window, not a buffer of its own: a send appends one value
/// and wakes only the subscribers that wait for it, so its cost does not grow with buffered copies,
/// and a slow or stopped subscriber holds no memory. One that falls more than `bufferLimit` values
/// behind skips to the newest `bufferLimit`; the sender never waits for it. The broadcast also
/// keeps the last `historyLimit` values, from which a new subscriber's backlog is chosen atomically
/// with its registration: nothing is missed or doubled between the backlog and the live values.
///
/// The subscriber's side is inlinable so that it is specialized where it is iterated: generic
/// code would look up type metadata for every value delivered to every subscriber.
@usableFromInline
package final class Broadcast<Value: Sendable>: Sendable {
    /// What a subscriber at some position finds.
    @usableFromInline
    enum Read {
        /// The value to deliver, and the position after it.
        case value(Value, next: UInt64)
        /// Nothing newer yet.
        case wait
        /// Nothing newer, ever.
        case finished
    }

    @usableFromInline
    typealias Waiter = UnsafeContinuation<(Value, next: UInt64)?, Never>

    /// A parked reader and what wakes it. The reader is not retained: its iterator holds it while it
    /// waits, and a cancelled reader's hole is never read.
    @usableFromInline
    typealias Parked = (reader: Unmanaged<Reader>, waiter: Waiter?)

    /// One iterator of a subscription: where it is parked, so that cancelling it costs O(1). Guarded
    /// by the broadcast's lock.
    @usableFromInline
    final class Reader: @unchecked Sendable {
        /// Its index in `State.parked`, valid while `round` is the state's.
        @usableFromInline
        var slot = 0
        /// The round of sends it parked in last.
        @usableFromInline
        var round: UInt64 = .max

        @usableFromInline
        init() {}
    }

    @usableFromInline
    struct State {
        /// The most recent values, oldest first; the latest is last.
        @usableFromInline
        var window: Deque<Value> = []
        /// The position the next value will take: every value sent so far has a lower one.
        @usableFromInline
        var end: UInt64 = 0
        /// Readers parked at `end`, waiting for the next value, in the order they parked; a
        /// cancelled one leaves a hole. Waking thousands in that order rather than in hash order
        /// walks their tasks' memory in the order it was allocated: a send to 10,000 costs a
        /// quarter less. Each reader knows its slot, so parking is an append and nothing else.
        @usableFromInline
        var parked: [Parked] = []
        /// The storage of an earlier `parked`, emptied, for the next round: a send to thousands
        /// allocates nothing.
        var spare: [Parked] = []
        /// Counts the sends that woke the parked readers (and `finish`): a reader's slot is valid
        /// only in the round it parked in.
        @usableFromInline
        var round: UInt64 = 0
        /// Cancelled readers' slots in `parked`.
        @usableFromInline
        var holes = 0
        @usableFromInline
        var isFinished = false

        @inlinable
        mutating func park(_ waiter: Waiter, reader: Reader) {
            reader.slot = parked.count
            reader.round = round
            parked.append((Unmanaged.passUnretained(reader), waiter))
        }

        /// Takes a cancelled reader's waiter out, if it is still parked.
        @usableFromInline
        mutating func unpark(_ reader: Reader) -> Waiter? {
            guard reader.round == round, let waiter = parked[reader.slot].waiter else { return nil }
            parked[reader.slot].waiter = nil
            holes += 1
            // Readers may come and go for days without a send: the holes must not pile up.
            if parked.count > 64, holes > parked.count / 2 {
                parked.removeAll { $0.waiter == nil }
                holes = 0
                for (slot, entry) in parked.enumerated() { entry.reader.takeUnretainedValue().slot = slot }
            }
            return waiter
        }

        /// Hands over every parked reader, to be woken outside the lock, and starts the next round.
        mutating func takeParked() -> [Parked] {
            var taken: [Parked] = []
            swap(&taken, &spare)
            swap(&taken, &parked)
            round &+= 1
            holes = 0
            return taken
        }

        @inlinable
        func read(at position: UInt64, limit: Int) -> Read {
            guard position < end else { return isFinished ? .finished : .wait }
            let oldest = end - UInt64(window.count)
            let from = max(position, end - UInt64(min(limit, window.count)))
            return .value(window[Int(from - oldest)], next: from + 1)
        }
    }

    @usableFromInline
    let state: Mutex<State>
    /// `State.end`, readable without the lock: a subscriber that has read everything goes straight
    /// to parking, which checks again under the lock.
    @usableFromInline
    let publishedEnd: Atomic<UInt64>
    /// Live subscriptions; an atomic, so a sender can skip a send nobody waits for without the lock.
    private let subscriptions = Atomic<Int>(0)
    /// How many unread values a subscriber keeps before the oldest are skipped.
    @usableFromInline
    let bufferLimit: Int
    private let historyLimit: Int
    private let windowLimit: Int

    package init(initial: Value?, bufferLimit: Int, historyLimit: Int = 0) {
        precondition(bufferLimit >= 1, "a subscriber needs room for one value")
        var state = State()
        if let initial {
            state.window.append(initial)
            state.end = 1
        }
        self.publishedEnd = Atomic(state.end)
        self.state = Mutex(state)
        self.bufferLimit = bufferLimit
        self.historyLimit = historyLimit
        self.windowLimit = max(bufferLimit, historyLimit)
    }

    package var latest: Value? { state.withLock { $0.window.last } }

    /// Live subscriptions: created and not yet ended or released.
    package var subscriberCount: Int { state.withLock { $0.isFinished } ? 0 : subscriptions.load(ordering: .relaxed) }

    /// Whether any subscription is live, read without the lock. A sender that checks it under a
    /// lock a subscriber took after subscribing (and before waiting for the news) sees it.
    package var hasSubscribers: Bool { subscriptions.load(ordering: .relaxed) > 0 }

    /// Sends the value `make` builds from the latest one, atomically, and returns it.
    @discardableResult
    package func send(_ make: (Value?) -> Value) -> Value {
        let (value, next, waiting) = state.withLock { state in
            let value = make(state.window.last)
            state.window.append(value)
            if state.window.count > windowLimit { state.window.removeFirst() }
            state.end += 1
            publishedEnd.store(state.end, ordering: .relaxed)
            return (value, state.end, state.takeParked())
        }
        // Outside the lock: waking thousands of tasks must not stall the next sender or subscriber.
        for case let (_, waiter?) in waiting { waiter.resume(returning: (value, next)) }
        recycle(waiting)
        return value
    }

    /// Keeps the storage of the readers a send woke for a later round.
    private func recycle(_ woken: consuming [Parked]) {
        woken.removeAll(keepingCapacity: true)
        state.withLock { state in
            if state.spare.capacity < woken.capacity { swap(&state.spare, &woken) }
        }
    }

    package func send(_ value: Value) {
        send { _ in value }
    }

    /// Subscribes. The subscription first yields what `backlog` picks from the history and the
    /// latest value (by default the latest value alone), then every value sent. It ends when the
    /// broadcast finishes or the consuming task is cancelled.
    package func subscribe(
        backlog: (_ history: Deque<Value>, _ latest: Value?) -> [Value] = { _, latest in latest.map { [$0] } ?? [] }
    ) -> Subscription<Value> {
        state.withLock { state in
            let history = state.window.count > historyLimit ? Deque(state.window.suffix(historyLimit)) : state.window
            let values = state.isFinished ? [] : backlog(history, state.window.last)
            subscriptions.add(1, ordering: .relaxed)
            return Subscription(broadcast: self, backlog: values, start: state.end)
        }
    }

    /// Readers parked now, and the slots kept for them, holes included.
    package var parking: (readers: Int, slots: Int) {
        state.withLock { ($0.parked.count - $0.holes, $0.parked.count) }
    }

    func unsubscribe() {
        subscriptions.subtract(1, ordering: .relaxed)
    }

    /// How many values were sent at or after `position`.
    @inlinable
    func unread(from position: UInt64) -> Int {
        state.withLock { Int($0.end - min(position, $0.end)) }
    }

    /// The value at `position` (or, for a subscriber more than `limit` values behind, the oldest of
    /// the newest `limit`), waiting for it if it has not been sent yet; `nil` once finished or cancelled.
    /// One `reader` per iterator: it parks as that reader.
    @inlinable
    func next(from position: UInt64, limit: Int, reader: Reader) async -> (Value, next: UInt64)? {
        if position < publishedEnd.load(ordering: .relaxed) {
            switch state.withLock({ $0.read(at: position, limit: limit) }) {
            case .value(let value, let next): return (value, next)
            case .finished: return nil
            case .wait: break
            }
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (waiter: Waiter) in
                let read = state.withLock { state in
                    let read = state.read(at: position, limit: limit)
                    guard case .wait = read else { return read }
                    // The cancellation handler may already have run and found no waiter to wake.
                    guard !Task.isCancelled else { return .finished }
                    state.park(waiter, reader: reader)
                    return .wait
                }
                switch read {
                case .value(let value, let next): waiter.resume(returning: (value, next))
                case .finished: waiter.resume(returning: nil)
                case .wait: break
                }
            }
        } onCancel: {
            state.withLock { $0.unpark(reader) }?.resume(returning: nil)
        }
    }

    /// Ends every subscription, and every later one at once: used at shutdown. Subscribers still
    /// get what was sent before.
    package func finish() {
        let waiting = state.withLock { state in
            state.isFinished = true
            return state.takeParked()
        }
        for case let (_, waiter?) in waiting { waiter.resume(returning: nil) }
    }
}
