import CSystemd
import Glibc

/// Starts a detached POSIX thread for a bus connection, so the blocking `poll` never occupies a
/// thread of Swift's cooperative pool, and sd-bus handles (which are not thread-safe) stay on one
/// thread.
enum BusThread {
    /// Carries the closure across `pthread_create`'s untyped context pointer.
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func start(_ run: @escaping @Sendable () -> Void) throws(BusError) {
        let context = Unmanaged.passRetained(Body(run)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            // Linux limits thread names to 15 bytes.
            _ = csystemd_name_current_thread("reachd-sd-bus")
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw BusError("pthread_create", code: result)
        }
        pthread_detach(thread)
    }
}
