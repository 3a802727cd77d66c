import Synchronization

/// The current verdict and every consumer of ``ConnectivityService/verdicts()``: each gets the
/// current verdict first, then every change, from a buffer of its own that keeps the newest few
/// when the consumer falls behind (the sender never waits).
final class VerdictFanOut: Sendable {
    private struct State {
        var current: ServiceVerdict
        var consumers: [Int: AsyncStream<ServiceVerdict>.Continuation] = [:]
        var lastID = 0
        var isFinished = false
    }

    private let state: Mutex<State>
    private let bufferLimit: Int

    init(initial: ServiceVerdict, bufferLimit: Int = 32) {
        state = Mutex(State(current: initial))
        self.bufferLimit = bufferLimit
    }

    var current: ServiceVerdict { state.withLock { $0.current } }

    func subscribe() -> AsyncStream<ServiceVerdict> {
        let (stream, continuation) = AsyncStream.makeStream(of: ServiceVerdict.self, bufferingPolicy: .bufferingNewest(bufferLimit))
        let id: Int? = state.withLock { state in
            continuation.yield(state.current)
            guard !state.isFinished else { return nil }
            state.lastID += 1
            state.consumers[state.lastID] = continuation
            return state.lastID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.consumers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Makes `verdict` current and sends it to every consumer, in the order of calls.
    func publish(_ verdict: ServiceVerdict) {
        state.withLock { state in
            state.current = verdict
            for consumer in state.consumers.values { consumer.yield(verdict) }
        }
    }

    func finish() {
        let consumers = state.withLock { state in
            state.isFinished = true
            defer { state.consumers = [:] }
            return state.consumers.values
        }
        for consumer in consumers { consumer.finish() }
    }
}
