/// Values from a broadcast, in order: a backlog chosen when subscribing, then every value sent
/// since, until the broadcast finishes or the consuming task is cancelled.
///
/// A subscriber that reads slower than values arrive skips ahead to the newest few (see
/// ReachCore's `EventHub`); it never holds the sender up, and it holds no buffer of its own. Dropping the
/// subscription, or ending the task that iterates it, unsubscribes.
public struct Subscription<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = Never

    /// Counts the subscription as live until the last copy of it, or of its iterator, is gone.
    @usableFromInline
    final class Registration: Sendable {
        @usableFromInline
        let broadcast: Broadcast<Element>

        init(_ broadcast: Broadcast<Element>) { self.broadcast = broadcast }

        deinit { broadcast.unsubscribe() }
    }

    private let registration: Registration
    private let backlog: [Element]
    private let start: UInt64

    init(broadcast: Broadcast<Element>, backlog: [Element], start: UInt64) {
        self.registration = Registration(broadcast)
        self.backlog = backlog
        self.start = start
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(registration: registration, backlog: backlog, position: start)
    }

    /// Reads the subscription: one reader per iterator, each from where the subscription began.
    public struct Iterator: AsyncIteratorProtocol {
        @usableFromInline
        let registration: Registration
        @usableFromInline
        var backlog: ArraySlice<Element>
        @usableFromInline
        var position: UInt64
        @usableFromInline
        var isDone = false
        @usableFromInline
        let reader = Broadcast<Element>.Reader()
        /// Unread values kept, backlog included, before the oldest are skipped.
        @usableFromInline
        let limit: Int

        init(registration: Registration, backlog: [Element], position: UInt64) {
            self.registration = registration
            self.backlog = backlog[...]
            self.position = position
            self.limit = registration.broadcast.bufferLimit + backlog.count
        }

        @inlinable
        public mutating func next() async -> Element? {
            if !backlog.isEmpty {
                let overflow = backlog.count + registration.broadcast.unread(from: position) - limit
                backlog.removeFirst(Swift.min(Swift.max(0, overflow), backlog.count))
                if let first = backlog.popFirst() { return first }
            }
            guard !isDone,
                let (value, next) = await registration.broadcast.next(from: position, limit: limit, reader: reader)
            else {
                isDone = true
                return nil
            }
            position = next
            return value
        }
    }
}
