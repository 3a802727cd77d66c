import DequeModule
import Synchronization

/// Latest-wins fan-out to any number of `AsyncStream` subscribers.
///
/// Each subscriber has its own buffer of at most `bufferLimit` undelivered values that drops its
/// *oldest* entries when full, so the sender never waits and memory per subscriber stays bounded
/// however slow, or stopped, a subscriber is. The broadcast remembers the latest value and the last
/// `historyLimit` values, from which a new subscriber's backlog is chosen atomically with its
/// registration: nothing is missed or doubled between the backlog and the live values.
final class Broadcast<Value: Sendable>: Sendable {
    private struct State {
        var latest: Value?
        var history: Deque<Value> = []
        var subscribers = SubscriberList<Value>()
        var isFinished = false
    }

    private let state: Mutex<State>
    private let bufferLimit: Int
    private let historyLimit: Int

    init(initial: Value?, bufferLimit: Int, historyLimit: Int = 0) {
        precondition(bufferLimit >= 1, "a subscriber needs room for one value")
        var state = State(latest: initial)
        if let initial, historyLimit > 0 { state.history.append(initial) }
        self.state = Mutex(state)
        self.bufferLimit = bufferLimit
        self.historyLimit = historyLimit
    }

    var latest: Value? { state.withLock { $0.latest } }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Sends the value `make` builds from the latest one, atomically, and returns it.
    @discardableResult
    func send(_ make: (Value?) -> Value) -> Value {
        state.withLock { state in
            let value = make(state.latest)
            state.latest = value
            if historyLimit > 0 {
                state.history.append(value)
                if state.history.count > historyLimit { state.history.removeFirst() }
            }
            state.subscribers.yield(value)
            return value
        }
    }

    func send(_ value: Value) {
        send { _ in value }
    }

    /// Subscribes. The stream first yields what `backlog` picks from the history and the latest
    /// value (by default the latest value alone), then every value sent. It ends when the broadcast
    /// finishes; cancelling the consuming task unsubscribes.
    func subscribe(
        backlog: (_ history: Deque<Value>, _ latest: Value?) -> [Value] = { _, latest in latest.map { [$0] } ?? [] }
    ) -> AsyncStream<Value> {
        let (stream, continuation, id) = state.withLock { state in
            let values = backlog(state.history, state.latest)
            let (stream, continuation) = AsyncStream.makeStream(
                of: Value.self, bufferingPolicy: .bufferingNewest(bufferLimit + values.count))
            guard !state.isFinished else { return (stream, continuation, UInt64?.none) }
            for value in values { continuation.yield(value) }
            return (stream, continuation, state.subscribers.add(continuation))
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.subscribers.remove(id) }
        }
        return stream
    }

    /// Ends every subscription, and every later one at once: used at shutdown.
    func finish() {
        let continuations = state.withLock { state in
            state.isFinished = true
            return state.subscribers.removeAll()
        }
        for continuation in continuations { continuation.finish() }
    }
}
