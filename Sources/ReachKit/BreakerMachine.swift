/// The circuit breaker's rule, without a lock: after `threshold` consecutive retryable failures it
/// opens, and lets nothing through until it is reset (connectivity restored: closed) or `cooldown`
/// has passed (half-open: one trial; its success closes the breaker, its failure opens it again).
/// ``CircuitBreaker`` keeps one under a lock for live calls; a durable queue keeps one under its own.
package struct BreakerMachine: Sendable {
    package enum Position: Sendable, Equatable {
        case closed
        case open(since: Duration)
        case halfOpen
    }

    package let threshold: Int
    package let cooldown: Duration
    package private(set) var position = Position.closed
    private var consecutiveFailures = 0

    package init(threshold: Int, cooldown: Duration) {
        precondition(threshold >= 1 && cooldown >= .zero, "a circuit breaker needs a positive threshold")
        self.threshold = threshold
        self.cooldown = cooldown
    }

    package var isOpen: Bool { if case .open = position { true } else { false } }

    /// How many calls may start now (at `uptime`): all (`limit`), one (half-open), or none; and,
    /// when none, how long until the cool-down ends.
    package mutating func admit(at uptime: Duration, limit: Int) -> (allowed: Int, retryIn: Duration?) {
        switch position {
        case .closed: return (limit, nil)
        case .halfOpen: return (1, nil)
        case .open(let since):
            guard uptime - since >= cooldown else { return (0, cooldown - (uptime - since)) }
            position = .halfOpen
            return (1, nil)
        }
    }

    package mutating func succeeded() {
        consecutiveFailures = 0
        position = .closed
    }

    /// A retryable failure; returns whether it opened the breaker.
    package mutating func failed(at uptime: Duration) -> Bool {
        consecutiveFailures += 1
        guard position == .halfOpen || (position == .closed && consecutiveFailures >= threshold) else { return false }
        position = .open(since: uptime)
        return true
    }

    /// Connectivity was restored, or a person said so: the server deserves a fresh chance.
    package mutating func reset() {
        consecutiveFailures = 0
        position = .closed
    }
}
