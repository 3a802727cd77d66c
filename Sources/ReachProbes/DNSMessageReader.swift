import ReachSupport

/// Reads a DNS message's bytes front to back, with every bound checked: a length, a count or a
/// compression pointer in the message is a claim to check, never an index to trust.
///
/// Names follow compression pointers (RFC 1035 §4.1.4) only backwards: a pointer must point
/// before the pointer itself, so that every jump lands earlier and a loop cannot be built. A name
/// stops at 255 bytes, and at 127 pointers (more than a name of 255 bytes can need).
struct DNSMessageReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    /// The most pointers one name may follow: each label it adds takes two bytes at least.
    static let maximumPointers = 127

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var remaining: Int { bytes.count - offset }

    mutating func uint8() throws(DNSMessageError) -> UInt8 {
        guard offset < bytes.count else { throw DNSMessageError(.endsEarly, at: offset) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() throws(DNSMessageError) -> UInt16 {
        guard remaining >= 2 else { throw DNSMessageError(.endsEarly, at: offset) }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    mutating func uint32() throws(DNSMessageError) -> UInt32 {
        UInt32(try uint16()) << 16 | UInt32(try uint16())
    }

    mutating func bytes(_ count: Int) throws(DNSMessageError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw DNSMessageError(.endsEarly, at: offset) }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A name, as dig prints it (``DNSName/escaped(_:)`` labels, no final dot; the root is `.`),
    /// leaving the reader after the name's bytes here (after its first pointer, if any).
    mutating func name() throws(DNSMessageError) -> String {
        var labels: [String] = []
        var length = 1  // the root's zero
        var position = offset
        var resumeAt: Int?
        var pointers = 0
        while true {
            guard position < bytes.count else { throw DNSMessageError(.endsEarly, at: position) }
            let byte = bytes[position]
            switch byte & 0xC0 {
            case 0x00:
                position += 1
                if byte == 0 {
                    offset = resumeAt ?? position
                    return labels.isEmpty ? "." : labels.joined(separator: ".")
                }
                let count = Int(byte)
                length += count + 1
                guard length <= DNSName.maximumLength else { throw DNSMessageError(.nameTooLong, at: position - 1) }
                guard position + count <= bytes.count else { throw DNSMessageError(.endsEarly, at: position) }
                labels.append(DNSName.escaped(Array(bytes[position..<position + count])))
                position += count
            case 0xC0:
                guard position + 1 < bytes.count else { throw DNSMessageError(.endsEarly, at: position) }
                let target = Int(byte & 0x3F) << 8 | Int(bytes[position + 1])
                guard target < position else { throw DNSMessageError(.pointerNotBackward, at: position) }
                pointers += 1
                guard pointers <= Self.maximumPointers else { throw DNSMessageError(.tooManyPointers, at: position) }
                if resumeAt == nil { resumeAt = position + 2 }
                position = target
            default:
                throw DNSMessageError(.reservedLabelType, at: position)
            }
        }
    }

    /// A resource record, its data read as its type says and required to fill its length exactly.
    mutating func record() throws(DNSMessageError) -> DNSRecord {
        let owner = try name()
        let type = try uint16()
        let recordClass = try uint16()
        let ttl = try uint32()
        let length = Int(try uint16())
        guard remaining >= length else { throw DNSMessageError(.endsEarly, at: offset) }
        let start = offset
        let end = start + length
        let data: DNSRecordData
        switch type {
        case 1, 28:
            guard length == (type == 1 ? 4 : 16), let address = IPAddress(bytes: try bytes(length)) else {
                throw DNSMessageError(.badRecordData, at: start)
            }
            data = .address(address)
        case 2, 5, 12:
            data = .name(try name())
        case 15:
            data = .mailExchange(preference: try uint16(), exchange: try name())
        case 16:
            var strings: [[UInt8]] = []
            while offset < end { strings.append(try bytes(Int(try uint8()))) }
            data = .text(strings)
        case 33:
            data = .service(priority: try uint16(), weight: try uint16(), port: try uint16(), target: try name())
        case 6:
            data = .startOfAuthority(
                primary: try name(),
                mailbox: try name(),
                serial: try uint32(),
                refresh: try uint32(),
                retry: try uint32(),
                expire: try uint32(),
                minimum: try uint32()
            )
        default:
            data = .other(try bytes(length))
        }
        // A name or string that ran past the data's length read another record's bytes.
        guard offset == end else { throw DNSMessageError(.badRecordData, at: start) }
        return DNSRecord(name: owner, type: type, recordClass: recordClass, ttl: ttl, data: data)
    }
}
