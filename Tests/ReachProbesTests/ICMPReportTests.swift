import ReachCore
import ReachProbes
import ReachSupport
import Testing

/// What `recvmsg` hands the echo loop, read back: an echo reply's sequence, the kernel's receive
/// stamp, and an ICMP error from the error queue with its sender, in the kernel's layout (an
/// 8-byte `cmsg_len`, level, type, then `struct sock_extended_err` and the offender's `sockaddr`).
/// The live errors (host unreachable from a router) are in ICMPBurstProberTests; time exceeded,
/// which no namespace rig here provokes, and the ICMPv6 forms are checked in these bytes.
struct ICMPReportTests {
    static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    /// One control message: header, `data`, padded to 8 bytes.
    static func control(level: Int32, type: Int32, _ data: [UInt8]) -> [UInt8] {
        let message = littleEndian(UInt64(16 + data.count)) + littleEndian(level) + littleEndian(type) + data
        return message + [UInt8](repeating: 0, count: (8 - message.count % 8) % 8)
    }

    /// `struct sock_extended_err` from ICMP (origin 2, or 3 for ICMPv6), then the sender's address.
    static func extendedError(origin: UInt8, type: UInt8, code: UInt8, sender: [UInt8]) -> [UInt8] {
        littleEndian(UInt32(113)) + [origin, type, code, 0] + littleEndian(UInt32(0)) + littleEndian(UInt32(0)) + sender
    }

    static let sender4: [UInt8] = littleEndian(UInt16(2)) + [0, 0, 10, 0, 0, 1] + [UInt8](repeating: 0, count: 8)
    static let sender6: [UInt8] =
        littleEndian(UInt16(10)) + [0, 0, 0, 0, 0, 0] + [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [
            1
        ]
        + [0, 0, 0, 0]
    /// The echo request the error is about: type 8, code 0, checksum, identifier, sequence 0x0102.
    static let request: [UInt8] = [8, 0, 0xAB, 0xCD, 0x12, 0x34, 0x01, 0x02]

    @Test func aTimeExceededNamesTheRouterAndTheEcho() {
        let control = Self.control(
            level: 0,
            type: 11,
            Self.extendedError(origin: 2, type: 11, code: 0, sender: Self.sender4)
        )
        let report = ICMPReport.error(control: control[...], data: Self.request[...], family: .ipv4)
        #expect(report == ICMPReport.ErrorReport(sequence: 0x0102, type: 11, code: 0, reporter: IPAddress("10.0.0.1")))
        let failure = ICMPErrorWords.failure(report!, family: .ipv4)
        #expect(failure.reason == .timeExceeded && failure.detail == "TTL exceeded in transit, from 10.0.0.1")
    }

    @Test func icmpv6sUnreachableAndHopLimit() throws {
        let unreachable = Self.control(
            level: 41,
            type: 25,
            Self.extendedError(origin: 3, type: 1, code: 3, sender: Self.sender6)
        )
        let report = try #require(ICMPReport.error(control: unreachable[...], data: Self.request[...], family: .ipv6))
        #expect(report.reporter == IPAddress("2001:db8::1"))
        let words = ICMPErrorWords.failure(report, family: .ipv6)
        #expect(words.reason == .destinationUnreachable && words.detail == "address unreachable, from 2001:db8::1")
        let hops = ICMPReport.ErrorReport(sequence: 1, type: 3, code: 0, reporter: nil)
        #expect(ICMPErrorWords.failure(hops, family: .ipv6).detail == "hop limit exceeded in transit")
        let other = ICMPReport.ErrorReport(sequence: 1, type: 12, code: 0, reporter: IPAddress("10.0.0.1"))
        #expect(ICMPErrorWords.failure(other, family: .ipv4).reason == .protocolError)
    }

    @Test func aLocalErrorOrAShortBufferIsNoReport() {
        let local = Self.control(
            level: 0,
            type: 11,
            Self.extendedError(origin: 1, type: 0, code: 0, sender: Self.sender4)
        )
        #expect(ICMPReport.error(control: local[...], data: Self.request[...], family: .ipv4) == nil, "origin local")
        let good = Self.control(
            level: 0,
            type: 11,
            Self.extendedError(origin: 2, type: 3, code: 1, sender: Self.sender4)
        )
        #expect(ICMPReport.error(control: good.prefix(20), data: Self.request[...], family: .ipv4) == nil, "cut short")
        #expect(ICMPReport.error(control: good[...], data: Self.request.prefix(6), family: .ipv4) == nil, "no sequence")
        // A length that claims more than the buffer holds ends the walk.
        var lying = good
        lying[0] = 200
        #expect(ICMPReport.error(control: lying[...], data: Self.request[...], family: .ipv4) == nil)
    }

    @Test func aReplysSequenceAndTheKernelsStamp() {
        #expect(ICMPReport.replySequence([0, 0, 0, 0, 0, 0, 0x12, 0x34][...], family: .ipv4) == 0x1234)
        #expect(ICMPReport.replySequence([129, 0, 0, 0, 0, 0, 0, 7][...], family: .ipv6) == 7)
        #expect(
            ICMPReport.replySequence([8, 0, 0, 0, 0, 0, 0, 7][...], family: .ipv4) == nil,
            "a request, not a reply"
        )
        let stamp = Self.control(
            level: 1,
            type: 35,
            Self.littleEndian(Int64(1_700_000_000)) + Self.littleEndian(Int64(250))
        )
        #expect(ICMPReport.receiveTime(control: stamp[...]) == 1_700_000_000_000_000_250)
    }
}
