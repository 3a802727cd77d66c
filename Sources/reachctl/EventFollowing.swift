/// How long to wait before reconnecting to reachd's event stream: doubling from ``first`` up to
/// ``longest``, back to ``first`` once events flow again.
struct ReconnectBackoff: Sendable {
    let first: Duration
    let longest: Duration
    /// Waits a random 50-100 % of the step, so the agents of many sessions do not reconnect in step.
    let jitter: Bool
    private var step: Duration

    init(first: Duration, longest: Duration, jitter: Bool = false) {
        self.first = first
        self.longest = longest
        self.jitter = jitter
        step = first
    }

    /// The wait before the next attempt; the one after is twice as long, up to ``longest``.
    mutating func next() -> Duration {
        defer { step = min(step * 2, longest) }
        return jitter ? step * Double.random(in: 0.5...1.0) : step
    }

    mutating func reset() {
        step = first
    }
}

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
