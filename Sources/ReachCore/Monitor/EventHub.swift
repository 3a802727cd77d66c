import ReachSupport

/// Broadcasts verdicts: each subscriber gets the current verdict first, then every change, in order,
/// numbered.
///
/// **What a lagging subscriber sees.** Each subscriber may fall at most `bufferLimit` events behind.
/// One that reads slower than verdicts change loses the *oldest* undelivered events, never the
/// newest: it skips ahead, always ends at the latest verdict, and can tell it skipped from a gap in
/// ``ConnectivityEvent/sequence``. The publisher never waits for it, and subscribers share one
/// window of events rather than holding copies.
///
/// The last `historyLimit` events are kept so that a subscriber that reconnects (an SSE client
/// sending `Last-Event-ID`) resumes without a gap.
///
/// Every event carries every target's status, so with many targets both limits shrink to keep
/// memory flat: the history, and how far a subscriber may fall behind, each hold at most
/// ``targetEntryBudget`` target statuses (but at least 16 and 4 events). Both share one window of
/// events, so that is about 1 MB in all (a target's status is about 270 bytes). With up to 16
/// targets the configured limits hold as they are.
final class EventHub: Sendable {
    /// How many target statuses the window of events may hold (about 1 MB). At 4 MB, the history
    /// of a daemon with 100 targets was two thirds of its private memory.
    static let targetEntryBudget = 4_096

    private let broadcast: Broadcast<ConnectivityEvent>

    init(initial: Verdict, firstSequence: UInt64 = 1, bufferLimit: Int, historyLimit: Int) {
        precondition(historyLimit >= 1, "the history holds at least the current event")
        let targets = max(1, initial.targets.count)
        broadcast = Broadcast(
            initial: ConnectivityEvent(sequence: max(1, firstSequence), verdict: initial),
            bufferLimit: min(bufferLimit, max(4, Self.targetEntryBudget / targets)),
            historyLimit: min(historyLimit, max(16, Self.targetEntryBudget / targets))
        )
    }

    var latest: ConnectivityEvent {
        guard let latest = broadcast.latest else { preconditionFailure("the hub starts with an event") }
        return latest
    }

    var subscriberCount: Int { broadcast.subscriberCount }

    /// Publishes `verdict` as the next event and returns it.
    @discardableResult
    func publish(_ verdict: Verdict) -> ConnectivityEvent {
        broadcast.send { latest in ConnectivityEvent(sequence: (latest?.sequence ?? 0) + 1, verdict: verdict) }
    }

    /// Subscribes: the current verdict, then every change, until the hub finishes or the consuming
    /// task is cancelled.
    ///
    /// - Parameter lastSequence: The last sequence number the subscriber saw, to resume after it.
    ///   Events still in the history are replayed; if it has left the history, or is newer than
    ///   anything published (an earlier run of reachd), the current verdict comes with `isReset` set.
    func subscribe(resumingAfter lastSequence: UInt64? = nil) -> Subscription<ConnectivityEvent> {
        broadcast.subscribe { history, latest in
            guard let latest else { return [] }
            guard let lastSequence else { return [latest] }
            if lastSequence == latest.sequence { return [] }
            // Any UInt64 may arrive from a client: compare without arithmetic that could overflow.
            if let oldest = history.first, lastSequence < latest.sequence, lastSequence >= oldest.sequence - 1 {
                return history.filter { $0.sequence > lastSequence }
            }
            var reset = latest
            reset.isReset = true
            return [reset]
        }
    }

    func finish() {
        broadcast.finish()
    }
}
