import CNetlink
import Glibc

/// Starts a detached POSIX thread, so blocking `poll`/`recv` never occupies a thread of Swift's
/// cooperative pool.
enum ReaderThread {
    /// Carries the closure across `pthread_create`'s untyped context pointer.
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func start(_ run: @escaping @Sendable () -> Void) throws(NetlinkSystemError) {
        let context = Unmanaged.passRetained(Body(run)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            // Linux limits thread names to 15 bytes.
            _ = cnetlink_name_current_thread("reachd-netlink")
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw NetlinkSystemError("pthread_create", code: result)
        }
        pthread_detach(thread)
    }
}
