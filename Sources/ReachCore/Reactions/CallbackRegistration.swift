import ReachSupport

/// A reaction registered with the monitor: a callback for one direction of transition, or (hooks,
/// webhooks) a body for either.
struct CallbackRegistration: Sendable {
    let id: CallbackID
    let name: String
    let directions: Set<TransitionDirection>
    /// `nil`: no deadline, the body bounds its own running time.
    let timeout: Duration?
    let body: @Sendable (ConnectivityTransition) async throws -> Void

    /// How a run ended.
    enum Ending: Sendable, Equatable {
        /// The body returned (or threw) before any timeout.
        case ended
        /// The body returned this long after its run started, having been reported as timed out.
        case endedLate(after: Duration)
        /// The calling task was cancelled (reachd is stopping); the body was cancelled and not waited for.
        case abandoned
    }

    /// Runs the body once for `transition`, calls `settled` with the outcome as soon as it is known
    /// (at the deadline for a body that outlives its timeout), and returns only when the body has
    /// really returned, or when the calling task is cancelled.
    ///
    /// The body runs in a task of its own, not a child task: a child that ignores cancellation
    /// would hold its parent past shutdown. Waiting for it to end instead of returning at the
    /// deadline is what keeps its reaction busy, so that a stuck body costs one task, not one per
    /// transition.
    func run(
        for transition: ConnectivityTransition,
        coalesced: Int,
        clock: MonitorClock,
        settled: @Sendable (CallbackReport) -> Void
    ) async -> Ending {
        let started = clock.uptime
        let body = self.body
        let work = Task { () -> CallbackReport.Outcome in
            do {
                try await body(transition)
                return .succeeded
            } catch {
                return .failed(String(describing: error))
            }
        }
        func report(_ outcome: CallbackReport.Outcome) {
            settled(
                CallbackReport(
                    callback: id,
                    name: name,
                    direction: transition.direction,
                    sequence: transition.sequence,
                    outcome: outcome,
                    duration: clock.uptime - started,
                    coalesced: coalesced
                )
            )
        }
        switch await work.value(within: timeout, sleep: clock.sleep(for:)) {
        case .finished(let outcome):
            report(outcome)
            return .ended
        case .cancelled:
            work.cancel()
            report(.cancelled)
            return .abandoned
        case .expired:
            report(.timedOut)
            work.cancel()
            guard case .finished = await work.value(within: nil) else { return .abandoned }
            return .endedLate(after: clock.uptime - started)
        }
    }
}
