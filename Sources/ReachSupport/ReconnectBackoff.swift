/// How long to wait before trying again: doubling from ``first`` up to ``longest``, back to
/// ``first`` once things work again.
///
/// One rule for everything that retries against something that may be down (reachctl and
/// ReachKit following reachd's event stream, ReachKit's queue retrying a handler), so that none of
/// them hammers a dead server and all of them come back quickly.
public struct ReconnectBackoff: Sendable, Hashable {
    /// The first wait, and the one after a ``reset()``.
    public let first: Duration
    /// The cap: waits double up to this and stay there.
    public let longest: Duration
    /// Waits a random 50-100 % of the step, so the many clients of one server do not retry in step.
    public let jitter: Bool
    private var step: Duration

    /// - Precondition: `0 < first <= longest`.
    public init(first: Duration, longest: Duration, jitter: Bool = false) {
        precondition(first > .zero && longest >= first, "backoff needs 0 < first <= longest")
        self.first = first
        self.longest = longest
        self.jitter = jitter
        step = first
    }

    /// The wait before the next attempt; the one after is twice as long, up to ``longest``.
    public mutating func next() -> Duration {
        defer { step = min(step * 2, longest) }
        return jitter ? step * Double.random(in: 0.5...1.0) : step
    }

    /// Things work again: the next wait is ``first``.
    public mutating func reset() {
        step = first
    }

    /// The wait after `failures` consecutive failures (1 for the first), without keeping count:
    /// for callers that store the count themselves.
    public func delay(afterFailures failures: Int) -> Duration {
        var step = first
        for _ in 1..<max(1, min(failures, 64)) where step < longest { step = min(step * 2, longest) }
        return jitter ? step * Double.random(in: 0.5...1.0) : step
    }
}
