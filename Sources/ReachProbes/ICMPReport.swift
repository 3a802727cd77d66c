import ReachSupport

/// What a ping socket's reads say (``EchoLoop``): an echo reply's sequence number, the kernel's
/// receive time, and the ICMP errors queued about an echo (`IP_RECVERR`) with the router that sent
/// them. Pure functions over the bytes `recvmsg` returned, every length checked.
package enum ICMPReport {
    /// An ICMP error about one of the socket's echoes.
    package struct ErrorReport: Sendable, Hashable {
        /// The sequence number of the echo it is about.
        package var sequence: UInt16
        /// ICMP's type and code (ICMPv6's for an IPv6 socket).
        package var type: UInt8
        package var code: UInt8
        /// Who sent it: the router (or this machine, when its own neighbour lookup failed).
        package var reporter: IPAddress?

        package init(sequence: UInt16, type: UInt8, code: UInt8, reporter: IPAddress?) {
            self.sequence = sequence
            self.type = type
            self.code = code
            self.reporter = reporter
        }
    }

    /// The sequence number of an echo reply, `nil` for anything else.
    package static func replySequence(_ bytes: ArraySlice<UInt8>, family: IPFamily) -> UInt16? {
        guard bytes.count >= 8, bytes[bytes.startIndex] == PingSocket.replyType(family) else { return nil }
        return UInt16(bytes[bytes.startIndex + 6]) << 8 | UInt16(bytes[bytes.startIndex + 7])
    }

    /// The kernel's receive time of a reply (`SCM_TIMESTAMPNS`, the real-time clock), in
    /// nanoseconds since the epoch; `nil` when the control data has none.
    package static func receiveTime(control: ArraySlice<UInt8>) -> Int64? {
        for message in controlMessages(control)
        where message.level == 1 && message.type == PingSocket.timestampNanoseconds {
            guard message.data.count >= 16 else { return nil }
            return Int64(littleEndian: load(message.data, at: 0)) * 1_000_000_000
                + Int64(littleEndian: load(message.data, at: 8))
        }
        return nil
    }

    /// The ICMP error an error-queue read (`MSG_ERRQUEUE`) holds: the extended error in the control
    /// data (`struct sock_extended_err`, then the sender's address), and the echo it is about in
    /// the data (the request's own ICMP header). `nil` for a local error, or anything unreadable.
    package static func error(control: ArraySlice<UInt8>, data: ArraySlice<UInt8>, family: IPFamily) -> ErrorReport? {
        let (level, type, origin): (Int32, Int32, UInt8) =
            family == .ipv6
            ? (41, PingSocket.ipv6RecvErr, PingSocket.originICMP6) : (0, PingSocket.ipRecvErr, PingSocket.originICMP)
        guard data.count >= 8,
            let message = controlMessages(control).first(where: { $0.level == level && $0.type == type }),
            message.data.count >= 16, message.data[message.data.startIndex + 4] == origin
        else { return nil }
        let start = message.data.startIndex
        let sequence = UInt16(data[data.startIndex + 6]) << 8 | UInt16(data[data.startIndex + 7])
        let offender = message.data[(start + 16)...]
        return ErrorReport(
            sequence: sequence,
            type: message.data[start + 5],
            code: message.data[start + 6],
            reporter: address(in: offender)
        )
    }

    /// The address of a `sockaddr_in` or `sockaddr_in6` (the family in host order, as the kernel writes it).
    private static func address(in bytes: ArraySlice<UInt8>) -> IPAddress? {
        guard bytes.count >= 2 else { return nil }
        let family = UInt16(littleEndian: load(bytes, at: 0))
        switch family {
        case 2 where bytes.count >= 8: return IPAddress(bytes: bytes[(bytes.startIndex + 4)..<(bytes.startIndex + 8)])
        case 10 where bytes.count >= 24:
            return IPAddress(bytes: bytes[(bytes.startIndex + 8)..<(bytes.startIndex + 24)])
        default: return nil
        }
    }

    /// The control messages of `recvmsg`'s control buffer (`struct cmsghdr`: an 8-byte length,
    /// the level and the type, the data 8-byte aligned), each bounded by the buffer.
    static func controlMessages(_ control: ArraySlice<UInt8>) -> [(level: Int32, type: Int32, data: ArraySlice<UInt8>)]
    {
        var messages: [(level: Int32, type: Int32, data: ArraySlice<UInt8>)] = []
        var offset = 0
        while control.count - offset >= 16 {
            let length = Int(UInt64(littleEndian: load(control, at: offset)))
            guard length >= 16, length <= control.count - offset else { break }
            let start = control.startIndex + offset
            messages.append(
                (
                    Int32(littleEndian: load(control, at: offset + 8)),
                    Int32(littleEndian: load(control, at: offset + 12)),
                    control[(start + 16)..<(start + length)]
                )
            )
            offset += (length + 7) & ~7
        }
        return messages
    }

    private static func load<T: FixedWidthInteger>(_ bytes: ArraySlice<UInt8>, at offset: Int) -> T {
        var value = T.zero
        withUnsafeMutableBytes(of: &value) { raw in
            for index in 0..<MemoryLayout<T>.size { raw[index] = bytes[bytes.startIndex + offset + index] }
        }
        return value
    }
}
