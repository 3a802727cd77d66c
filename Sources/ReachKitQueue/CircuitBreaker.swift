/// The queue's circuit breaker: after `threshold` consecutive retryable failures it opens, and
/// lets nothing through until connectivity is restored again (closed) or `cooldown` has passed
/// (half-open: one item goes through; its success closes the breaker, its failure opens it again).
struct CircuitBreaker: Sendable {
    enum Position: Sendable, Equatable {
        case closed
        case open(since: Duration)
        case halfOpen
    }

    let threshold: Int
    let cooldown: Duration
    private(set) var position = Position.closed
    private(set) var consecutiveFailures = 0

    init(threshold: Int, cooldown: Duration) {
        self.threshold = threshold
        self.cooldown = cooldown
    }

    var isOpen: Bool { if case .open = position { true } else { false } }

    /// How many items may start now (at `uptime`): all, one (half-open), or none; and, when none,
    /// how long until the cool-down ends.
    mutating func admit(at uptime: Duration, limit: Int) -> (allowed: Int, retryIn: Duration?) {
        switch position {
        case .closed: return (limit, nil)
        case .halfOpen: return (1, nil)
        case .open(let since):
            guard uptime - since >= cooldown else { return (0, cooldown - (uptime - since)) }
            position = .halfOpen
            return (1, nil)
        }
    }

    mutating func succeeded() {
        consecutiveFailures = 0
        position = .closed
    }

    /// A retryable failure; returns whether it opened the breaker.
    mutating func failed(at uptime: Duration) -> Bool {
        consecutiveFailures += 1
        guard position == .halfOpen || (position == .closed && consecutiveFailures >= threshold) else { return false }
        position = .open(since: uptime)
        return true
    }

    /// Connectivity was restored: the server deserves a fresh chance.
    mutating func restored() {
        consecutiveFailures = 0
        position = .closed
    }
}
