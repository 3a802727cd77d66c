/// How much work a queue holds.
public struct QueueStats: Sendable, Hashable {
    /// Waiting for delivery (in flight excluded).
    public var pending: Int
    /// Handed to the handler and not yet finished (a handler that overran its deadline included, until it ends).
    public var inFlight: Int
    /// Dead letters: rejected, exhausted or expired, kept for a person to look at.
    public var dead: Int
    /// How long the oldest waiting item (in flight included) has waited, computed at the call;
    /// `nil` when none waits.
    public var oldestPendingAge: Duration?
    /// Whether the circuit breaker is open (draining paused until restoration or cool-down).
    public var isBreakerOpen: Bool
}
