import Logging
import ReachCore
import ReachSupport
import Synchronization

/// What a service that learns its verdicts from outside the core (``ReachdService`` from reachd's
/// event stream, the test kit's service from the test) shares: the current verdict, every consumer
/// of ``ConnectivityService/verdicts()``, and the callbacks its transitions run by the core's
/// reaction rule (``ReachCore/TransitionReactions``, the code the embedded monitor runs).
///
/// Each consumer gets the current verdict first, then every change, from a buffer of its own that
/// keeps the newest few when the consumer falls behind (the sender never waits).
package final class VerdictFeed: Sendable {
    private struct State {
        var current: ServiceVerdict
        /// The last `connected` or `disconnected`: what a transition moves from.
        var lastDefinite: ConnectivityState?
        var consumers: [Int: AsyncStream<ServiceVerdict>.Continuation] = [:]
        var lastID = 0
        var isFinished = false
    }

    private let state: Mutex<State>
    private let reactions: TransitionReactions
    private let callbackTimeout: Duration
    private let bufferLimit: Int

    /// - Parameter callbackTimeout: A callback's timeout when it names none.
    package init(
        initial: ServiceVerdict,
        callbackTimeout: Duration,
        clock: MonitorClock,
        logger: Logger,
        bufferLimit: Int = 32
    ) {
        state = Mutex(State(current: initial, lastDefinite: initial.state == .unknown ? nil : initial.state))
        reactions = TransitionReactions(clock: clock, logger: logger)
        self.callbackTimeout = callbackTimeout
        self.bufferLimit = bufferLimit
    }

    package var current: ServiceVerdict { state.withLock { $0.current } }

    package func verdicts() -> AsyncStream<ServiceVerdict> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ServiceVerdict.self,
            bufferingPolicy: .bufferingNewest(bufferLimit)
        )
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

    /// Makes `verdict` current and sends it to every consumer, in the order of calls. A move
    /// between `connected` and `disconnected` is a transition (`unknown` in between is none): it
    /// is handed to the callbacks, numbered `sequence`, and returned.
    @discardableResult
    package func publish(_ verdict: ServiceVerdict, sequence: UInt64) -> ServiceTransition? {
        state.withLock { state in
            state.current = verdict
            for consumer in state.consumers.values { consumer.yield(verdict) }
            guard verdict.state != .unknown else { return nil }
            defer { state.lastDefinite = verdict.state }
            guard let last = state.lastDefinite, last != verdict.state else { return nil }
            let transition = ServiceTransition(
                direction: verdict.isConnected ? .restored : .lost,
                sequence: sequence,
                verdict: verdict
            )
            // Under the lock, so that callbacks see transitions in the order they were published.
            reactions.deliver(transition.core)
            return transition
        }
    }

    /// Registers `body` for `direction`'s transitions.
    package func register(
        _ name: String?,
        on direction: TransitionDirection,
        timeout: Duration?,
        _ body: @escaping @Sendable (ServiceTransition) async throws -> Void
    ) -> CallbackHandle {
        let id = reactions.add(named: name, on: [direction], timeout: timeout ?? callbackTimeout) {
            try await body(ServiceTransition(core: $0))
        }
        return CallbackHandle(id: id) { [reactions] in reactions.remove($0) }
    }

    package func callbackReports() -> Subscription<CallbackReport> { reactions.callbackReports() }

    /// Runs the callbacks until the calling task is cancelled; then ends every verdict stream.
    package func run() async {
        await reactions.run()
        let consumers = state.withLock { state in
            state.isFinished = true
            defer { state.consumers = [:] }
            return state.consumers.values
        }
        for consumer in consumers { consumer.finish() }
    }
}
