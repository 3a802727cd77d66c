import NIOCore
import Synchronization

/// Counts a listener's open connections and closes one accepted past the limit, so that clients
/// cannot take every descriptor reachd has (its probes need them too). gRPC's transport has no
/// such limit of its own; it offers this hook on every accepted connection.
final class ConnectionBudget: Sendable {
    private let open = Atomic<Int>(0)
    private let limit: Int

    init(limit: Int) {
        precondition(limit > 0, "a listener needs room for one connection")
        self.limit = limit
    }

    func admit(_ channel: any Channel) -> EventLoopFuture<Void> {
        guard open.add(1, ordering: .relaxed).newValue <= limit else {
            open.subtract(1, ordering: .relaxed)
            return channel.close()
        }
        channel.closeFuture.whenComplete { _ in self.open.subtract(1, ordering: .relaxed) }
        return channel.eventLoop.makeSucceededVoidFuture()
    }
}
