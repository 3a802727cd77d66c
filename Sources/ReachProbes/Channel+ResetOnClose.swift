import NIOCore

#if canImport(Glibc)
import Glibc
#endif

extension Channel {
    /// Makes closing the connection send a reset instead of a FIN (`SO_LINGER` with a zero
    /// timeout), so that a probe every second leaves no socket behind in TIME_WAIT.
    ///
    /// Set through the channel's synchronous options, on its loop: NIO's `setSoLinger` answers
    /// with a future, one more allocation per probe. Those options carry an `Int`, which has the
    /// size of `struct linger`, so the value is the `Int` with the struct's own bytes.
    func closeWithReset() throws {
        try syncOptions?.setOption(.socketOption(.so_linger), value: Self.lingerWithoutDelay)
    }

    private static var lingerWithoutDelay: Int {
        precondition(MemoryLayout<linger>.size == MemoryLayout<Int>.size)
        return withUnsafeBytes(of: linger(l_onoff: 1, l_linger: 0)) { $0.load(as: Int.self) }
    }
}
