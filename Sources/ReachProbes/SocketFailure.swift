import NIOCore
import ReachCore

#if canImport(Glibc)
import Glibc
#endif

/// What the socket layer's errors mean for a probe. An errno from the kernel, or a closed NIO
/// channel, names the same reason whether the HTTP, TCP or gRPC prober met it.
enum SocketFailure {
    /// The reason for an errno from `connect`, `read` or `write`; `nil` for one with no meaning here.
    static func classify(errno code: Int32, phase: ProbePhase, detail: String) -> ProbeFailure? {
        switch code {
        case ECONNREFUSED:
            ProbeFailure(.connectionRefused, phase: .connect, detail: detail)
        // EADDRNOTAVAIL, EAFNOSUPPORT and EINVAL: no address of the family the target is limited to.
        case ENETUNREACH, EHOSTUNREACH, ENETDOWN, EADDRNOTAVAIL, EAFNOSUPPORT, EINVAL:
            ProbeFailure(.networkUnreachable, phase: .connect, detail: detail)
        case ECONNRESET, EPIPE, ECONNABORTED:
            ProbeFailure(.connectionReset, phase: phase, detail: detail)
        case ETIMEDOUT:
            ProbeFailure(.timeout, phase: phase, detail: detail)
        default:
            nil
        }
    }

    /// The reason for a NIO channel error; `nil` for one with no meaning here.
    static func classify(_ error: ChannelError, phase: ProbePhase, detail: String) -> ProbeFailure? {
        switch error {
        case .connectTimeout: ProbeFailure(.timeout, phase: .connect, detail: detail)
        case .eof, .ioOnClosedChannel, .outputClosed, .inputClosed, .alreadyClosed: ProbeFailure(.connectionReset, phase: phase, detail: detail)
        default: nil
        }
    }
}
