import Synchronization

/// A prober that starts a probe and calls back when it ends, with no task of its own.
///
/// At a thousand probes a second, a Swift task per probe and a hop from the event loop back to
/// the cooperative pool for each result cost more CPU than the probe's own system calls. A prober
/// that conforms runs the probe where its I/O runs and hands the result over right there; the
/// scheduler records it on that thread.
package protocol StartingProber: Prober {
    /// Starts probing `target` and calls `whenDone` exactly once, on any thread, within
    /// `target.timeout` (sooner, with a `cancelled` result, when cancelled).
    func start(_ target: ProbeTarget, whenDone: @escaping @Sendable (ProbeResult) -> Void) -> ProbeCancellation
}

/// Ends a started probe or a scheduled tick early; cancelling what has already ended does nothing.
package struct ProbeCancellation: Sendable {
    private let action: @Sendable () -> Void

    /// - Parameter action: What cancelling does; it may run on any thread, more than once.
    package init(_ action: @escaping @Sendable () -> Void) {
        self.action = action
    }

    /// Asks the work to end; a probe then reports `cancelled`, a tick never fires.
    package func cancel() { action() }

    /// For work that ended before it could be cancelled.
    package static let none = ProbeCancellation {}
}

extension StartingProber {
    /// Starts a probe and awaits it, for callers that are tasks (tests, an immediate check).
    package func probe(_ target: ProbeTarget) async -> ProbeResult {
        await awaitProbe(target)
    }

    /// Starts a probe and awaits its result; cancelling the calling task cancels the probe.
    package func awaitProbe(_ target: ProbeTarget) async -> ProbeResult {
        let started = StartedProbe()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                started.keep(start(target) { continuation.resume(returning: $0) })
            }
        } onCancel: {
            started.cancel()
        }
    }
}

extension Prober {
    /// Runs ``probe(_:)`` in a task of its own and calls `whenDone` with its result: how the
    /// scheduler starts probes of probers whose work is async (gRPC, test probers).
    package func startInTask(
        _ target: ProbeTarget,
        whenDone: @escaping @Sendable (ProbeResult) -> Void
    ) -> ProbeCancellation {
        let task = Task { whenDone(await probe(target)) }
        return ProbeCancellation { task.cancel() }
    }
}

/// A started probe's cancellation, for a cancellation handler that may run before it is known.
private final class StartedProbe: Sendable {
    private let state = Mutex<(cancellation: ProbeCancellation?, cancelled: Bool)>((nil, false))

    func keep(_ cancellation: ProbeCancellation) {
        let cancelledAlready = state.withLock { state in
            state.cancellation = cancellation
            return state.cancelled
        }
        if cancelledAlready { cancellation.cancel() }
    }

    func cancel() {
        state.withLock { state in
            state.cancelled = true
            return state.cancellation
        }?.cancel()
    }
}
