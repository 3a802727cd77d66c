/// A callback registered with the monitor for one direction of transition.
struct CallbackRegistration: Sendable {
    let id: CallbackID
    let name: String
    let direction: TransitionDirection
    let timeout: Duration
    let body: @Sendable (ConnectivityTransition) async throws -> Void

    /// Runs the callback once for `transition` and reports how it went, returning by the deadline
    /// even when the callback ignores cancellation.
    ///
    /// The callback runs in a task of its own, not a child task, for exactly that reason: a child
    /// that never returns would hold its parent, and with it the next transition or shutdown. Such a
    /// callback is cancelled, reported as timed out, and left to finish on its own.
    func run(for transition: ConnectivityTransition, clock: MonitorClock) async -> CallbackReport {
        let started = clock.uptime
        let (outcomes, settle) = AsyncStream.makeStream(of: CallbackReport.Outcome.self, bufferingPolicy: .bufferingOldest(1))
        let work = Task {
            do {
                try await body(transition)
                settle.yield(.succeeded)
            } catch {
                settle.yield(.failed(String(describing: error)))
            }
        }
        let deadline = Task {
            guard (try? await clock.sleep(for: timeout)) != nil else { return }
            settle.yield(.timedOut)
        }
        var iterator = outcomes.makeAsyncIterator()
        // `next()` returns nil when this task is cancelled: reachd is shutting down.
        let outcome = await iterator.next() ?? .cancelled
        deadline.cancel()
        work.cancel()
        settle.finish()
        return CallbackReport(
            callback: id, name: name, direction: direction, sequence: transition.sequence,
            outcome: outcome, duration: clock.uptime - started)
    }
}
