import ReachSupport

/// How a ``DurableQueue`` delivers: how many at once, how often to retry and how long to wait,
/// and when to stop trying against a server that keeps failing.
public struct QueuePolicy: Sendable {
    /// Items handled at once. They start in enqueue order; with 1 (the default) they also finish
    /// in that order, and an item waiting for a retry holds back the ones behind it.
    public var concurrency: Int
    /// Attempts before an item that keeps failing is moved to the dead letters.
    public var maxAttempts: Int
    /// The wait before retrying an item, by its failures so far (with jitter: 50-100 % of the step).
    public var retry: ReconnectBackoff
    /// Consecutive retryable failures (of any items) that open the circuit breaker: draining then
    /// stops until connectivity is restored again or ``breakerCooldown`` has passed.
    public var breakerThreshold: Int
    /// How long an open breaker waits before letting one item through to test the server.
    public var breakerCooldown: Duration

    /// The defaults: one at a time, 8 attempts, 1 s doubling to 5 min, a breaker after 5 failures with a 1-minute cool-down.
    public init(
        concurrency: Int = 1, maxAttempts: Int = 8,
        retry: ReconnectBackoff = ReconnectBackoff(first: .seconds(1), longest: .seconds(300), jitter: true),
        breakerThreshold: Int = 5, breakerCooldown: Duration = .seconds(60)
    ) {
        precondition(concurrency >= 1 && maxAttempts >= 1 && breakerThreshold >= 1, "a queue policy needs positive limits")
        self.concurrency = concurrency
        self.maxAttempts = maxAttempts
        self.retry = retry
        self.breakerThreshold = breakerThreshold
        self.breakerCooldown = breakerCooldown
    }
}

/// What a handler throws to say how its failure should be treated. Any other error counts as
/// ``retryable(_:)``: a queue that cannot tell errs on the side of delivering.
public struct DeliveryFailure: Error, CustomStringConvertible, Sendable {
    /// Whether trying again later may succeed (a timeout, a 503) or never will (a 400, a payload the server rejects).
    public let isRetryable: Bool
    /// In words, for the logs and the dead letter's `lastError`.
    public let reason: String

    /// Try again after the backoff; counts toward the circuit breaker and the item's attempts.
    public static func retryable(_ reason: String) -> DeliveryFailure { DeliveryFailure(isRetryable: true, reason: reason) }

    /// Do not try again: the item goes to the dead letters at once.
    public static func permanent(_ reason: String) -> DeliveryFailure { DeliveryFailure(isRetryable: false, reason: reason) }

    public var description: String { "\(isRetryable ? "retryable" : "permanent") failure: \(reason)" }
}

/// One item handed to a queue's handler.
public struct QueuedItem<Item: Sendable>: Sendable {
    /// The idempotency key it was enqueued with: send it along, so the server can drop a
    /// redelivery (after a crash, at most the items in flight are delivered again).
    public let key: String
    /// The item as it was enqueued.
    public let item: Item
    /// 1 for the first attempt.
    public let attempt: Int
    /// When it was enqueued (the first time, for an item retried).
    public let enqueuedAt: WallTime
}

/// How much work a queue holds.
public struct QueueStats: Sendable, Hashable {
    /// Waiting for delivery (in flight excluded).
    public var pending: Int
    /// Handed to the handler and not yet finished.
    public var inFlight: Int
    /// Dead letters: failed permanently or too often, kept for a person to look at.
    public var dead: Int
    /// How long the oldest waiting item (in flight included) has waited; `nil` when none waits.
    public var oldestPendingAge: Duration?
    /// Whether the circuit breaker is open (draining paused until restoration or cool-down).
    public var isBreakerOpen: Bool
}
