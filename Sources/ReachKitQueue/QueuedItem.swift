import ReachSupport

/// One item handed to a queue's handler.
public struct QueuedItem<Item: Sendable>: Sendable {
    /// The idempotency key it was enqueued with: send it along, so the server can drop a
    /// redelivery (after a crash, at most the items in flight are delivered again).
    public let key: String
    /// The item as it was enqueued.
    public let item: Item
    /// 1 for the first attempt.
    public let attempt: Int
    /// When it was enqueued (the first time, for an item retried; when its dead letter was retried, for one that died).
    public let enqueuedAt: WallTime
}
