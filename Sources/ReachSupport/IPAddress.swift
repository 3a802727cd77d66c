/// The two IP families a link can carry traffic for.
public enum IPFamily: String, Sendable, Hashable, CaseIterable, Comparable {
    case ipv4
    case ipv6

    public static func < (lhs: IPFamily, rhs: IPFamily) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// An IPv4 or IPv6 address held as its numeric value.
///
/// The core parses and prints addresses itself so that deciding "is there a route to the target"
/// needs no C library and stays testable.
package struct IPAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let family: IPFamily
    /// The address, right-aligned: an IPv4 address occupies the low 32 bits.
    package let value: UInt128

    package init(family: IPFamily, value: UInt128) {
        self.family = family
        self.value = family == .ipv4 ? value & 0xFFFF_FFFF : value
    }

    /// Creates an address from network-order bytes: 4 for IPv4, 16 for IPv6.
    package init?(bytes: some Collection<UInt8>) {
        let family: IPFamily
        switch bytes.count {
        case 4: family = .ipv4
        case 16: family = .ipv6
        default: return nil
        }
        self.init(family: family, value: bytes.reduce(UInt128(0)) { $0 << 8 | UInt128($1) })
    }

    /// Parses dotted-quad IPv4 or RFC 4291 IPv6 text (with `::` and an embedded IPv4 tail).
    package init?(_ text: some StringProtocol) {
        if text.contains(":") {
            guard let value = Self.parseIPv6(Substring(text)) else { return nil }
            self.init(family: .ipv6, value: value)
        } else {
            guard let value = Self.parseIPv4(Substring(text)) else { return nil }
            self.init(family: .ipv4, value: UInt128(value))
        }
    }

    package var bitWidth: Int { family == .ipv4 ? 32 : 128 }

    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    package var networkBytes: [UInt8] {
        let count = bitWidth / 8
        return (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * (count - 1 - $0))) }
    }

    /// Loopback: 127.0.0.0/8 or ::1.
    package var isLoopback: Bool {
        switch family {
        case .ipv4: value >> 24 == 127
        case .ipv6: value == 1
        }
    }

    package var description: String {
        switch family {
        case .ipv4:
            (0..<4).map { String((value >> (24 - 8 * $0)) & 0xFF) }.joined(separator: ".")
        case .ipv6:
            Self.formatIPv6(value)
        }
    }

    package static func < (lhs: IPAddress, rhs: IPAddress) -> Bool {
        (lhs.family, lhs.value) < (rhs.family, rhs.value)
    }

    private static func parseIPv4(_ text: Substring) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(\.isASCIIDigit),
                let octet = UInt32(part), octet <= 255
            else { return nil }
            value = value << 8 | octet
        }
        return value
    }

    private static func parseIPv6(_ text: Substring) -> UInt128? {
        let halves = text.split(separator: "::", maxSplits: 1, omittingEmptySubsequences: false)
            .map(String.init)
        guard halves.count <= 2, !(halves.count == 2 && halves[1].contains("::")) else { return nil }
        func groups(_ part: String) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (offset, piece) in pieces.enumerated() {
                if offset == pieces.count - 1, piece.contains("."), let v4 = parseIPv4(piece) {
                    result += [UInt16(v4 >> 16), UInt16(v4 & 0xFFFF)]
                } else {
                    guard (1...4).contains(piece.count), piece.allSatisfy(\.isHexDigit),
                        let group = UInt16(piece, radix: 16)
                    else { return nil }
                    result.append(group)
                }
            }
            return result
        }
        guard let head = groups(halves[0]) else { return nil }
        let tail = halves.count == 2 ? groups(halves[1]) : []
        guard let tail else { return nil }
        let missing = 8 - head.count - tail.count
        guard halves.count == 2 ? missing >= 1 : missing == 0 else { return nil }
        let all = head + Array(repeating: 0, count: missing) + tail
        return all.reduce(UInt128(0)) { $0 << 16 | UInt128($1) }
    }

    /// RFC 5952: lower-case hex, leading zeros dropped, the longest run (≥ 2) of zero groups as `::`.
    private static func formatIPv6(_ value: UInt128) -> String {
        let groups = (0..<8).map { UInt16(truncatingIfNeeded: value >> (112 - 16 * $0)) }
        var best = (start: -1, length: 0)
        var run = (start: -1, length: 0)
        for (index, group) in groups.enumerated() {
            if group == 0 {
                run = run.start < 0 ? (index, 1) : (run.start, run.length + 1)
                if run.length > best.length { best = run }
            } else {
                run = (-1, 0)
            }
        }
        let hex = groups.map { String($0, radix: 16) }
        guard best.length >= 2 else { return hex.joined(separator: ":") }
        let head = hex[..<best.start].joined(separator: ":")
        let tail = hex[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }
}

/// An address with a prefix length: a route destination or an interface's network.
package struct IPPrefix: Sendable, Hashable, CustomStringConvertible {
    package let address: IPAddress
    package let length: Int

    package init?(address: IPAddress, length: Int) {
        guard (0...address.bitWidth).contains(length) else { return nil }
        self.address = address
        self.length = length
    }

    /// Parses `address/length`; a bare address is a host prefix.
    package init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = IPAddress(first) else { return nil }
        let length = parts.count == 2 ? Int(parts[1]) : address.bitWidth
        guard let length else { return nil }
        self.init(address: address, length: length)
    }

    package var family: IPFamily { address.family }
    /// A default route's destination: `0.0.0.0/0` or `::/0`.
    package var isDefault: Bool { length == 0 }

    package func contains(_ other: IPAddress) -> Bool {
        guard other.family == family else { return false }
        let shift = address.bitWidth - length
        guard shift < address.bitWidth else { return true }
        return address.value >> shift == other.value >> shift
    }

    package var description: String { "\(address)/\(length)" }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
