/// Domain names between their text and their wire form (RFC 1035 §3.1): labels of 1–63 bytes,
/// 255 bytes in all on the wire.
package enum DNSName {
    /// The longest name on the wire, length bytes and the root's zero included.
    package static let maximumLength = 255
    package static let maximumLabelLength = 63

    /// `name`'s wire form (labels, then the root's zero); `nil` for an empty label, a label over 63
    /// bytes or a name over 255. A final dot, or none, is the same name; `.` alone is the root.
    package static func wire(_ name: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        let trimmed = name.hasSuffix(".") ? name.dropLast() : Substring(name)
        if !trimmed.isEmpty {
            for label in trimmed.split(separator: ".", omittingEmptySubsequences: false) {
                let utf8 = Array(label.utf8)
                guard (1...maximumLabelLength).contains(utf8.count) else { return nil }
                bytes.append(UInt8(utf8.count))
                bytes += utf8
            }
        }
        bytes.append(0)
        return bytes.count <= maximumLength ? bytes : nil
    }

    /// A label as dig prints it: printable ASCII as is, `.` and `\` escaped, any other byte (a
    /// control character, a space, UTF-8) as `\DDD`, so that no answer can put a terminal escape
    /// into a log line or a status document. A TXT string (`keepingSpaces`) keeps its spaces and
    /// dots, as its text reads.
    package static func escaped(_ bytes: [UInt8], keepingSpaces: Bool = false) -> String {
        var text = ""
        text.reserveCapacity(bytes.count)
        for byte in bytes {
            if keepingSpaces, byte == UInt8(ascii: ".") || byte == UInt8(ascii: " ") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
                continue
            }
            switch byte {
            case UInt8(ascii: "."), UInt8(ascii: "\\"):
                text.append("\\")
                text.unicodeScalars.append(Unicode.Scalar(byte))
            case 0x21...0x7E:
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = String(byte)
                text += "\\" + String(repeating: "0", count: 3 - digits.count) + digits
            }
        }
        return text
    }

    /// Whether two names are the same name: DNS compares ASCII letters without case (RFC 4343),
    /// and a final dot changes nothing.
    package static func same(_ a: String, _ b: String) -> Bool {
        let (a, b) = (
            a.hasSuffix(".") && a != "." ? a.dropLast() : Substring(a),
            b.hasSuffix(".") && b != "." ? b.dropLast() : Substring(b)
        )
        return a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lowercased($0) == lowercased($1) }
    }

    static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
