import CNetlink
import Glibc

/// An eventfd the reader thread polls beside the netlink socket, so cancellation wakes it at once
/// instead of waiting for the next kernel event.
final class ShutdownDoorbell: Sendable {
    /// Immutable after init and only passed to `poll`/`write`, which are thread-safe system calls.
    let descriptor: Int32

    init() throws(NetlinkSystemError) {
        let descriptor = cnetlink_eventfd()
        guard descriptor >= 0 else { throw NetlinkSystemError("eventfd") }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Wakes the reader; safe from any thread, any number of times.
    func ring() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(descriptor, $0.baseAddress, $0.count) }
    }
}
