import ReachSupport

/// An item a queue gave up on, kept with why: for a person or a repair tool to look at, then retry
/// (``DurableQueue/retryDeadLetter(key:)``), drop (``DurableQueue/dropDeadLetter(key:)``) or purge
/// with the others (``DurableQueue/purgeDeadLetters(olderThan:)``). Its key stays taken until it
/// is dropped or purged: enqueueing it again is refused, as for an item still pending.
public struct DeadLetter<Item: Sendable>: Sendable {
    /// The idempotency key it was enqueued with.
    public let key: String
    /// The item as it was enqueued.
    public let item: Item
    /// Why it died.
    public let reason: DeadLetterReason
    /// The attempts made: 1 for an item that failed permanently at once, 0 for one that expired untried.
    public let attempts: Int
    /// The last failure's words (a ``DeliveryFailure``'s reason, or the error's description); `nil`
    /// for an item that expired untried.
    public let lastError: String?
    /// When it died.
    public let diedAt: WallTime
}

/// Why a queue gave an item up: a stable code (its raw value) for a program or a dashboard to sort by.
public enum DeadLetterReason: String, Sendable, Hashable, CaseIterable {
    /// The handler threw ``DeliveryFailure/permanent(_:)``: the server will never take it.
    case rejected
    /// It failed ``QueuePolicy/maxAttempts`` times.
    case exhausted
    /// Its time to be delivered (``QueuePolicy/expiry``, or its own) passed first.
    case expired
}
