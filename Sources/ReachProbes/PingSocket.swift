import Glibc
import ReachPOSIX
import ReachSupport

/// An unprivileged ICMP echo socket (`SOCK_DGRAM` with `IPPROTO_ICMP` or `IPPROTO_ICMPV6`): what
/// the gateway evidence (``ICMPEchoProber``) and `icmp` targets (``EchoLoop``) send echoes on,
/// without raw sockets or capabilities. The kernel allows it to the groups in
/// `net.ipv4.ping_group_range` (both families), fills in the identifier and checksum, and hands
/// it only the replies (and, with ``enableErrorReports(_:family:)``, the ICMP errors) for its own
/// identifier.
package enum PingSocket {
    /// Why a ping socket could not be opened.
    package enum OpenFailure: Error, Sendable, Hashable {
        /// `EACCES`/`EPERM`: `ping_group_range` leaves this process's groups out; or
        /// `EPROTONOSUPPORT`/`EAFNOSUPPORT`: no ICMP sockets (of this family) at all.
        case notPermitted(errno: Int32)
        case failed(errno: Int32)
    }

    /// Setting and ancillary-data numbers Glibc's module leaves out (linux/in.h, in6.h, errqueue.h,
    /// asm-generic/socket.h).
    static let ipRecvErr: Int32 = 11
    static let ipv6RecvErr: Int32 = 25
    static let messageErrorQueue: Int32 = 0x2000
    static let timestampNanoseconds: Int32 = 35
    static let originICMP: UInt8 = 2
    static let originICMP6: UInt8 = 3

    /// A non-blocking, close-on-exec ping socket of `family`.
    package static func open(_ family: IPFamily) -> Result<Int32, OpenFailure> {
        let descriptor = socket(
            family == .ipv6 ? AF_INET6 : AF_INET,
            Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            Int32(family == .ipv6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP)
        )
        guard descriptor >= 0 else {
            let code = errno
            return .failure(
                [EACCES, EPERM, EPROTONOSUPPORT, EAFNOSUPPORT].contains(code)
                    ? .notPermitted(errno: code) : .failed(errno: code)
            )
        }
        return .success(descriptor)
    }

    /// Sends this socket's traffic out of `interface` only (`SO_BINDTODEVICE`, allowed without
    /// privileges since Linux 5.7); the errno when it cannot.
    package static func bind(_ descriptor: Int32, toDevice interface: String) -> Int32? {
        let bound = interface.withCString {
            setsockopt(descriptor, SOL_SOCKET, SO_BINDTODEVICE, $0, socklen_t(strlen($0) + 1))
        }
        return bound == 0 ? nil : errno
    }

    /// Queues the ICMP errors about this socket's echoes (destination unreachable, time exceeded)
    /// with the router that sent them (`IP_RECVERR`), and stamps each reply with the kernel's
    /// receive time (`SO_TIMESTAMPNS`), so that a busy process does not read its own lateness as
    /// the network's.
    static func enableErrorReports(_ descriptor: Int32, family: IPFamily) {
        var on: Int32 = 1
        let length = socklen_t(MemoryLayout<Int32>.size)
        if family == .ipv6 {
            _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), ipv6RecvErr, &on, length)
        } else {
            _ = setsockopt(descriptor, Int32(IPPROTO_IP), ipRecvErr, &on, length)
        }
        _ = setsockopt(descriptor, SOL_SOCKET, timestampNanoseconds, &on, length)
    }

    /// An echo request: type 8 (ICMPv6: 128), code 0, `sequence`, then `reachd` and padding to
    /// 16 bytes of data; the kernel fills in the checksum and identifier.
    static func echoRequest(_ family: IPFamily, sequence: UInt16) -> [UInt8] {
        [family == .ipv6 ? 128 : 8, 0, 0, 0, 0, 0, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
            + Array("reachd".utf8) + [UInt8](repeating: 0, count: 10)
    }

    /// The echo reply's type: 0 (ICMPv6: 129).
    static func replyType(_ family: IPFamily) -> UInt8 { family == .ipv6 ? 129 : 0 }
}
