import Logging
import ReachCore
import ReachSupport
import Synchronization

/// What a service that learns its verdicts from outside the core (``ReachdService`` from reachd's
/// event stream, the test kit's service from the test) shares: the current verdict, every consumer
/// of ``ConnectivityService/verdicts()``, and the callbacks its transitions run by the core's
/// transition rule (``ReachCore/TransitionRule``) and reaction rule (``ReachCore/TransitionReactions``),
/// the code the embedded monitor runs.
///
/// Each consumer gets the current verdict first, then every change, from a ``ReachSupport/Broadcast``
/// that keeps the newest few for a consumer that falls behind (the sender never waits).
package final class VerdictFeed: Sendable {
    private struct State {
        var transitions: TransitionRule
        var isFinished = false
    }

    private let state: Mutex<State>
    private let sent: Broadcast<ServiceVerdict>
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
        state = Mutex(State(transitions: TransitionRule(initial: initial.state)))
        sent = Broadcast(initial: initial, bufferLimit: bufferLimit)
        reactions = TransitionReactions(clock: clock, logger: logger)
        self.callbackTimeout = callbackTimeout
        self.bufferLimit = bufferLimit
    }

    package var current: ServiceVerdict { state.withLock { _ in sent.latest! } }

    package func verdicts() -> AsyncStream<ServiceVerdict> {
        // Under the lock ``publish(_:sequence:)`` sends under: the current verdict, in the stream
        // at once, and the subscription to what comes after it, nothing missed or doubled between.
        let (subscription, current) = state.withLock { state in
            (state.isFinished ? nil : sent.subscribe(backlog: { _, _ in [] }), sent.latest!)
        }
        guard let subscription else {
            // Ended: the current verdict, and nothing after it.
            return AsyncStream { continuation in
                continuation.yield(current)
                continuation.finish()
            }
        }
        return AsyncStream(first: current, subscription, bufferLimit: bufferLimit) { $0 }
    }

    /// Makes `verdict` current and sends it to every consumer, in the order of calls. A
    /// transition (``ReachCore/TransitionRule``) is handed to the callbacks, numbered `sequence`,
    /// and returned.
    @discardableResult
    package func publish(_ verdict: ServiceVerdict, sequence: UInt64) -> ServiceTransition? {
        state.withLock { state in
            sent.send(verdict)
            guard let direction = state.transitions.next(verdict.state) else { return nil }
            let transition = ServiceTransition(direction: direction, sequence: sequence, verdict: verdict)
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
        state.withLock { state in
            state.isFinished = true
            sent.finish()
        }
    }
}
