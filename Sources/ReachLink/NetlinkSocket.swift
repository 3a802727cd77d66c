import CNetlink
import Glibc
import ReachPOSIX

/// An `AF_NETLINK`/`NETLINK_ROUTE` socket subscribed to link, address and route notifications.
///
/// Owned and used by one thread (the reader); not `Sendable` on purpose.
final class NetlinkSocket {
    /// What one `recv` produced.
    enum Reception {
        /// `count` bytes of one datagram from port `sender` (0: the kernel); `truncated` when the
        /// datagram did not fit the buffer.
        case datagram(count: Int, truncated: Bool, sender: UInt32)
        /// `ENOBUFS`: the receive queue overflowed and notifications were lost.
        case overrun
        /// The receive queue is empty (`EAGAIN`).
        case empty
        /// A signal interrupted the call.
        case interrupted
    }

    /// Link, IPv4/IPv6 address and IPv4/IPv6 route notifications.
    static let groups =
        UInt32(RTMGRP_LINK) | UInt32(RTMGRP_IPV4_IFADDR) | UInt32(RTMGRP_IPV6_IFADDR)
        | UInt32(RTMGRP_IPV4_ROUTE) | UInt32(RTMGRP_IPV6_ROUTE)

    let descriptor: Int32
    /// The port id the kernel assigned: dump replies carry it, notifications carry their sender's.
    let portID: UInt32

    /// Opens, sizes and binds the socket in the calling thread's network namespace.
    init(receiveBufferSize: Int, groups: UInt32 = NetlinkSocket.groups) throws(SystemCallError) {
        let descriptor = socket(
            AF_NETLINK,
            Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            NETLINK_ROUTE
        )
        guard descriptor >= 0 else { throw SystemCallError.current("socket(AF_NETLINK)") }
        self.descriptor = descriptor
        var size = Int32(clamping: receiveBufferSize)
        // SO_RCVBUFFORCE passes rmem_max but needs CAP_NET_ADMIN; SO_RCVBUF is capped at rmem_max.
        if setsockopt(descriptor, SOL_SOCKET, SO_RCVBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size)) != 0,
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) != 0
        {
            let error = SystemCallError.current("setsockopt(SO_RCVBUF)")
            close(descriptor)
            throw error
        }
        var address = sockaddr_nl()
        address.nl_family = sa_family_t(AF_NETLINK)
        address.nl_groups = groups
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
            }
        }
        guard bound == 0 else {
            let error = SystemCallError.current("bind(AF_NETLINK)")
            close(descriptor)
            throw error
        }
        var length = socklen_t(MemoryLayout<sockaddr_nl>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else {
            let error = SystemCallError.current("getsockname(AF_NETLINK)")
            close(descriptor)
            throw error
        }
        self.portID = address.nl_pid
    }

    deinit {
        close(descriptor)
    }

    /// The receive buffer the kernel actually granted (it doubles the request for bookkeeping).
    var receiveBufferSize: Int {
        var size: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, &length) == 0 else { return 0 }
        return Int(size)
    }

    /// Asks for every object of `kind`, both IP families; the replies arrive as a multipart message.
    func requestDump(_ kind: DumpKind, sequence: UInt32) throws(SystemCallError) {
        let (type, bodySize): (Int, Int) =
            switch kind {
            case .links: (RTM_GETLINK, 16)  // struct ifinfomsg
            case .addresses: (RTM_GETADDR, 8)  // struct ifaddrmsg
            case .routes: (RTM_GETROUTE, 12)  // struct rtmsg
            }
        // Family AF_UNSPEC (0) in the zeroed body asks for IPv4 and IPv6 alike.
        try send(
            Self.message(
                type: UInt16(type),
                flags: UInt16(NLM_F_REQUEST | NLM_F_DUMP),
                sequence: sequence,
                body: [UInt8](repeating: 0, count: bodySize)
            )
        )
    }

    /// Sends one complete netlink message to the kernel.
    func send(_ message: [UInt8]) throws(SystemCallError) {
        var kernel = sockaddr_nl()
        kernel.nl_family = sa_family_t(AF_NETLINK)
        while true {
            let sent = message.withUnsafeBytes { bytes in
                withUnsafePointer(to: &kernel) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(
                            descriptor,
                            bytes.baseAddress,
                            bytes.count,
                            0,
                            $0,
                            socklen_t(MemoryLayout<sockaddr_nl>.size)
                        )
                    }
                }
            }
            if sent >= 0 { return }
            if errno == EINTR { continue }
            throw SystemCallError.current("sendto(AF_NETLINK)")
        }
    }

    /// Reads one datagram without blocking, with the port id of its sender.
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Reception {
        var source = sockaddr_nl()
        var length = socklen_t(MemoryLayout<sockaddr_nl>.size)
        // MSG_TRUNC makes recv return the datagram's real length, so truncation is visible.
        let count = withUnsafeMutablePointer(to: &source) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(
                    descriptor,
                    buffer.baseAddress,
                    buffer.count,
                    Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC),
                    $0,
                    &length
                )
            }
        }
        if count >= 0 {
            return .datagram(count: min(count, buffer.count), truncated: count > buffer.count, sender: source.nl_pid)
        }
        switch errno {
        case ENOBUFS: return .overrun
        case EAGAIN, EWOULDBLOCK: return .empty
        case EINTR: return .interrupted
        default: throw SystemCallError.current("recv(AF_NETLINK)")
        }
    }

    /// Builds a netlink message: header, fixed body, then already-encoded attributes.
    static func message(type: UInt16, flags: UInt16, sequence: UInt32, body: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(NetlinkHeader.size + body.count)
        append(UInt32(truncatingIfNeeded: NetlinkHeader.size + body.count), to: &bytes)
        append(type, to: &bytes)
        append(flags, to: &bytes)
        append(sequence, to: &bytes)
        append(UInt32(0), to: &bytes)
        bytes += body
        return bytes
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value) { bytes += $0 }
    }
}
