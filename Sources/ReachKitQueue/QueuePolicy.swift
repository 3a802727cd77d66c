import ReachSupport

/// How a ``DurableQueue`` delivers: how many at once and in what order, how long one delivery may
/// take, how often to retry and how long to wait, when to give an item up, and when to stop trying
/// against a server that keeps failing.
///
/// ## The order kept
///
/// Items start in enqueue order (an item whose dead letter is retried counts as enqueued then).
/// - At ``concurrency`` 1 (the default) the queue is strictly first in, first out: an item is
///   handed to the handler only once every item enqueued before it was delivered, cancelled or
///   moved to the dead letters. An item waiting out its retry backoff holds back those behind it.
///   The one exception: an item whose handler overran its deadline and ignores cancellation is
///   passed over until that handler ends, so that it cannot stall the queue.
/// - Above 1, up to ``concurrency`` items are handed over at once, the oldest due first, and they
///   may finish in any order. An item waiting out its backoff (or whose handler overran its
///   deadline and has not yet ended) does not hold back the others: they go on, and it starts again
///   when it is due. So an item may be delivered after items enqueued behind it, but never before
///   an older item that is due and not failing.
public struct QueuePolicy: Sendable {
    /// Items handled at once: 1 for strict first-in-first-out order (see the order kept, above).
    public var concurrency: Int
    /// Attempts before an item that keeps failing is moved to the dead letters (reason `exhausted`).
    public var maxAttempts: Int
    /// The wait before retrying an item, by its failures so far (with jitter: 50-100 % of the step).
    public var retry: ReconnectBackoff
    /// Consecutive retryable failures (of any items) that open the circuit breaker: draining then
    /// stops until connectivity is restored again or ``breakerCooldown`` has passed.
    public var breakerThreshold: Int
    /// How long an open breaker waits before letting one item through to test the server.
    public var breakerCooldown: Duration
    /// How long one delivery may take: a handler still running then is cancelled and its attempt
    /// counts as a retryable failure, so that one hung request cannot stall the queue. The item is
    /// not handed over again before that handler has ended, but its place goes to the next item.
    /// Measured in real time, whatever clock schedules the queue: a handler's work takes real time.
    public var deliveryTimeout: Duration
    /// How long an item may wait to be delivered, from its enqueueing (`nil`: for ever). An item
    /// still undelivered then moves to the dead letters with the reason `expired`, connected or
    /// not; one in flight at that moment is left to finish, and expires if it then fails.
    /// ``DurableQueue/enqueue(_:key:expiresAfter:)`` may give one item a time of its own.
    public var expiry: Duration?
    /// Whether a loss of connectivity (a `disconnected` verdict) cancels the deliveries under way.
    /// A delivery so cancelled counts no attempt: the item is delivered again after the
    /// restoration. Off by default: a request that may still succeed (a server on the same host,
    /// a loss that is only the monitor's) is let run to its deadline.
    public var cancelsDeliveriesOnLoss: Bool

    /// The defaults: one at a time, 8 attempts, 1 s doubling to 5 min, a breaker after 5 failures
    /// with a 1-minute cool-down, 30 s per delivery, no expiry, deliveries left to run on a loss.
    public init(
        concurrency: Int = 1,
        maxAttempts: Int = 8,
        retry: ReconnectBackoff = ReconnectBackoff(first: .seconds(1), longest: .seconds(300), jitter: true),
        breakerThreshold: Int = 5,
        breakerCooldown: Duration = .seconds(60),
        deliveryTimeout: Duration = .seconds(30),
        expiry: Duration? = nil,
        cancelsDeliveriesOnLoss: Bool = false
    ) {
        precondition(
            concurrency >= 1 && maxAttempts >= 1 && breakerThreshold >= 1,
            "a queue policy needs positive limits"
        )
        precondition(
            deliveryTimeout > .zero && (expiry ?? .seconds(1)) > .zero,
            "a queue policy needs positive durations"
        )
        self.concurrency = concurrency
        self.maxAttempts = maxAttempts
        self.retry = retry
        self.breakerThreshold = breakerThreshold
        self.breakerCooldown = breakerCooldown
        self.deliveryTimeout = deliveryTimeout
        self.expiry = expiry
        self.cancelsDeliveriesOnLoss = cancelsDeliveriesOnLoss
    }
}
