/// The continuations of a broadcast's subscribers. Not synchronised: its owner keeps it under a lock.
///
/// Never finish a continuation while holding that lock: `finish()` runs the stream's termination
/// handler synchronously, and the handler takes the lock to unsubscribe.
struct SubscriberList<Element: Sendable>: Sendable {
    private var continuations: [UInt64: AsyncStream<Element>.Continuation] = [:]
    private var nextID: UInt64 = 0

    var count: Int { continuations.count }

    mutating func add(_ continuation: AsyncStream<Element>.Continuation) -> UInt64 {
        nextID += 1
        continuations[nextID] = continuation
        return nextID
    }

    mutating func remove(_ id: UInt64) {
        continuations[id] = nil
    }

    /// Yields to every subscriber, dropping those whose stream has ended.
    mutating func yield(_ element: Element) {
        var ended: [UInt64] = []
        for (id, continuation) in continuations {
            if case .terminated = continuation.yield(element) { ended.append(id) }
        }
        for id in ended { continuations[id] = nil }
    }

    /// Removes every subscriber and returns their continuations, for the caller to finish outside its lock.
    mutating func removeAll() -> [AsyncStream<Element>.Continuation] {
        defer { continuations = [:] }
        return Array(continuations.values)
    }
}
