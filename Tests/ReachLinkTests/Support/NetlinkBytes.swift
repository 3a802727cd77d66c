@testable import ReachLink

/// Helpers for building and rewriting netlink bytes in tests.
enum NetlinkBytes {
    static func fromHex(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.utf8.count / 2)
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            bytes.append(nibble(high) << 4 | nibble(low))
        }
        return bytes
    }

    private static func nibble(_ character: UInt8) -> UInt8 {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        default: 0
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    static func datagrams(_ hexes: [String]) -> [[UInt8]] { hexes.map(fromHex) }

    /// Offsets of each message in a datagram (following nlmsg_len, aligned to 4).
    static func messageOffsets(_ datagram: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var offset = 0
        while offset + 16 <= datagram.count {
            offsets.append(offset)
            let length = Int(load(UInt32.self, datagram, offset))
            guard length >= 16 else { break }
            offset += (length + 3) & ~3
        }
        return offsets
    }

    /// Rewrites sequence and port id of every message, so a capture looks like a reply to our own dump.
    static func readdressed(_ datagram: [UInt8], sequence: UInt32, portID: UInt32) -> [UInt8] {
        var bytes = datagram
        for offset in messageOffsets(datagram) {
            store(sequence, &bytes, offset + 8)
            store(portID, &bytes, offset + 12)
        }
        return bytes
    }

    static func load<T: FixedWidthInteger>(_: T.Type, _ bytes: [UInt8], _ offset: Int) -> T {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
    }

    static func store<T: FixedWidthInteger>(_ value: T, _ bytes: inout [UInt8], _ offset: Int) {
        withUnsafeBytes(of: value) { raw in
            for (index, byte) in raw.enumerated() { bytes[offset + index] = byte }
        }
    }

    static func integer<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value) { Array($0) }
    }

    /// One rtattr, padded to 4 bytes.
    static func attribute(_ type: UInt16, _ payload: [UInt8]) -> [UInt8] {
        var bytes = integer(UInt16(4 + payload.count)) + integer(type) + payload
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    /// A complete message: header, body; `nlmsg_len` counts everything given.
    static func message(
        type: UInt16,
        flags: UInt16 = 0,
        sequence: UInt32 = 0,
        portID: UInt32 = 0,
        body: [UInt8]
    ) -> [UInt8] {
        integer(UInt32(16 + body.count)) + integer(type) + integer(flags) + integer(sequence) + integer(portID) + body
    }

    /// `ifinfomsg`.
    static func linkHeader(
        family: UInt8 = 0,
        type: UInt16 = 1,
        index: Int32,
        flags: UInt32,
        change: UInt32 = 0
    ) -> [UInt8] {
        [family, 0] + integer(type) + integer(index) + integer(flags) + integer(change)
    }

    /// `ifaddrmsg`.
    static func addressHeader(
        family: UInt8,
        prefixLength: UInt8,
        flags: UInt8 = 0,
        scope: UInt8 = 0,
        index: UInt32
    ) -> [UInt8] {
        [family, prefixLength, flags, scope] + integer(index)
    }

    /// `rtmsg`.
    static func routeHeader(
        family: UInt8,
        destinationLength: UInt8,
        table: UInt8 = 254,
        type: UInt8 = 1,
        flags: UInt32 = 0
    ) -> [UInt8] {
        [family, destinationLength, 0, 0, table, 3, 0, type] + integer(flags)
    }

    static func cString(_ text: String) -> [UInt8] { Array(text.utf8) + [0] }
}
