import CGNU
import Glibc

/// Starts a detached, named POSIX thread for work that blocks (an adapter's `poll` on netlink or
/// sd-bus, a durable queue's disk flushes), so blocking never occupies a thread of Swift's
/// cooperative pool and handles that are not thread-safe stay on one thread.
package enum DedicatedThread {
    /// Carries the closure across `pthread_create`'s untyped context pointer.
    private final class Body: Sendable {
        let name: String
        let run: @Sendable () -> Void
        init(_ name: String, _ run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// - Parameter name: Shown by `top -H` and gdb; Linux keeps at most 15 bytes.
    package static func start(named name: String, _ run: @escaping @Sendable () -> Void) throws(SystemCallError) {
        let context = Unmanaged.passRetained(Body(name, run)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread,
            nil,
            { context in
                guard let context else { return nil }
                let body = Unmanaged<Body>.fromOpaque(context).takeRetainedValue()
                _ = dedicated_thread_name_current(String(body.name.utf8.prefix(15)) ?? "reachd")
                body.run()
                return nil
            },
            context
        )
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw SystemCallError("pthread_create", code: result)
        }
        pthread_detach(thread)
    }
}
