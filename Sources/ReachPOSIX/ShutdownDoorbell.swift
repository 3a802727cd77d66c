import CGNU
import Glibc

/// An eventfd a dedicated thread polls beside its socket, so cancellation wakes it at once instead
/// of waiting for the next message. A thread that also takes work queued by other threads rings it
/// for that too, and ``drain()``s it before taking the work.
package final class ShutdownDoorbell: Sendable {
    /// Immutable after init and only passed to `poll`/`write`, which are thread-safe system calls.
    package let descriptor: Int32

    package init() throws(SystemCallError) {
        let descriptor = dedicated_thread_eventfd()
        guard descriptor >= 0 else { throw SystemCallError("eventfd", code: errno) }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Wakes the thread; safe from any thread, any number of times. Until drained the eventfd stays
    /// readable: a ring before the thread first polls is not lost.
    package func ring() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// Resets it (non-blocking), so the next poll waits for the next ring: for a thread woken for
    /// queued work. Drain before taking the work, so a ring that comes after is never lost.
    package func drain() {
        var count: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &count) { read(descriptor, $0.baseAddress, $0.count) }
    }

    /// Whether ``ring()`` has been called since the last ``drain()``; does not block.
    package var hasRung: Bool {
        var descriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }
}
