/// Broadcasts verdicts: each subscriber gets the current verdict first, then every change, in order,
/// numbered.
///
/// **What a lagging subscriber sees.** Each subscriber buffers at most `bufferLimit` undelivered
/// events. One that reads slower than verdicts change loses the *oldest* undelivered events, never
/// the newest: it skips ahead, always ends at the latest verdict, and can tell it skipped from a gap
/// in ``ConnectivityEvent/sequence``. The publisher never waits for it and its memory stays bounded.
///
/// The last `historyLimit` events are kept so that a subscriber that reconnects (an SSE client
/// sending `Last-Event-ID`) resumes without a gap.
final class EventHub: Sendable {
    private let broadcast: Broadcast<ConnectivityEvent>

    init(initial: Verdict, bufferLimit: Int, historyLimit: Int) {
        precondition(historyLimit >= 1, "the history holds at least the current event")
        broadcast = Broadcast(
            initial: ConnectivityEvent(sequence: 1, verdict: initial), bufferLimit: bufferLimit, historyLimit: historyLimit)
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
    func subscribe(resumingAfter lastSequence: UInt64? = nil) -> AsyncStream<ConnectivityEvent> {
        broadcast.subscribe { history, latest in
            guard let latest else { return [] }
            guard let lastSequence else { return [latest] }
            if lastSequence == latest.sequence { return [] }
            if let oldest = history.first, lastSequence + 1 >= oldest.sequence, lastSequence < latest.sequence {
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
