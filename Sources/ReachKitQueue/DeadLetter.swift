/// An item a queue gave up on, kept with why: for a person or a repair tool to look at, re-enqueue
/// under a new key, or drop.
public struct DeadLetter<Item: Sendable>: Sendable {
    /// The idempotency key it was enqueued with.
    public let key: String
    /// The item as it was enqueued.
    public let item: Item
    /// The attempts made: 1 for an item that failed permanently at once.
    public let attempts: Int
    /// The last failure's words (a ``DeliveryFailure``'s reason, or the error's description).
    public let lastError: String?
}

