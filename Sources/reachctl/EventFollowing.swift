import ReachCore

extension ReachdClient {
    /// Follows `/v1/events` across breaks: each reconnect resumes after the last event id seen
    /// (`Last-Event-ID`), so nothing is missed that reachd still remembers, and a reachd that
    /// restarted answers with a `reset` event. Between attempts it waits as `backoff` says.
    ///
    /// - Parameters:
    ///   - onEvent: Each event, in order.
    ///   - onBroken: Each break and the wait before the next attempt; throw to stop following.
    /// - Throws: What `onEvent` or `onBroken` throw, or `CancellationError`.
    func follow(
        backoff: ReconnectBackoff,
        onEvent: (ServerSentEvent) async throws -> Void,
        onBroken: (ReachdUnreachable, Duration) async throws -> Void
    ) async throws {
        var backoff = backoff
        var lastEventID: String?
        while true {
            do {
                try await events(after: lastEventID) { event in
                    if let id = event.id { lastEventID = id }
                    backoff.reset()
                    try await onEvent(event)
                    return true
                }
            } catch let error as ReachdUnreachable {
                let wait = backoff.next()
                try await onBroken(error, wait)
                try await Task.sleep(for: wait)
            }
        }
    }
}
