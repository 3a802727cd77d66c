import NIOCore
import NIOPosix
import ReachCore
import ReachPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// What the socket layer's errors mean for a probe. An errno from the kernel, or a closed NIO
/// channel, names the same reason whether the HTTP, TCP or gRPC prober met it.
///
/// A detail says only what the reason does not: the reason's own words (ReachAPI's `ReasonWords`)
/// are what the status document, reachctl and the log show, and the detail follows them. So the
/// errno's words (``ReachPOSIX/SystemCallError/reason(_:)``) where they are more precise than the
/// reason, and no detail where they would repeat it; never NIO's description of its error.
enum SocketFailure {
    /// The reason for an errno from `connect`, `read` or `write`; `nil` for one with no meaning here.
    static func classify(errno code: Int32, phase: ProbePhase) -> ProbeFailure? {
        switch code {
        case ECONNREFUSED:
            ProbeFailure(.connectionRefused, phase: .connect)
        case ENETUNREACH, EHOSTUNREACH, ENETDOWN, EADDRNOTAVAIL:
            ProbeFailure(.networkUnreachable, phase: .connect, detail: SystemCallError.reason(code))
        // EAFNOSUPPORT and EINVAL: the name has no address of the family the target is limited to.
        case EAFNOSUPPORT, EINVAL:
            ProbeFailure(.networkUnreachable, phase: .connect, detail: ProbeFailure.noAddressOfFamily)
        case ECONNRESET:
            ProbeFailure(.connectionReset, phase: phase)
        case EPIPE, ECONNABORTED:
            ProbeFailure(.connectionReset, phase: phase, detail: SystemCallError.reason(code))
        case ETIMEDOUT:
            ProbeFailure(.timeout, phase: phase)
        default:
            nil
        }
    }

    /// The reason for a NIO channel error; `nil` for one with no meaning here.
    static func classify(_ error: ChannelError, phase: ProbePhase) -> ProbeFailure? {
        switch error {
        case .connectTimeout: ProbeFailure(.timeout, phase: .connect)
        case .eof, .inputClosed:
            ProbeFailure(.connectionReset, phase: phase, detail: "the server closed the connection")
        case .ioOnClosedChannel, .outputClosed, .alreadyClosed: ProbeFailure(.connectionReset, phase: phase)
        default: nil
        }
    }

    /// A name the resolver could not turn into an address: the name and the resolver's words
    /// (`name or service not known`, `temporary failure in name resolution`).
    static func unresolved(_ host: String, _ resolverWords: String? = nil) -> ProbeFailure {
        ProbeFailure(.dnsFailure, phase: .dns, detail: resolverWords.map { "\(host): \($0.lowercased())" } ?? host)
    }
}

/// A target limited to one address family, given an address of the other: it fails without a
/// system call, in these words.
struct AddressFamilyMismatch: Error {
    let detail: String
}
