import ReachSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The `Date` header's value (``ReachSupport/HTTPDate``), formatted when a response asks for it
/// and kept for the rest of that second: no timer refreshes it.
enum DateHeader {
    private static let cache = Mutex<(second: Int64, text: String)>((-1, ""))

    /// Now, as a `Date` header value.
    static var now: String {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        let second = Int64(clock.tv_sec)
        if let cached = cache.withLock({ $0.second == second ? $0.text : nil }) { return cached }
        let text = HTTPDate.string(secondsSinceEpoch: second)
        cache.withLock { $0 = (second, text) }
        return text
    }
}
