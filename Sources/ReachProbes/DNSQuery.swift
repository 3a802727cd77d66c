import ReachCore

/// The query a `dns` probe sends: a standard query with recursion desired, one question of class
/// IN, and EDNS's OPT record offering a 1,232-byte datagram (the DNS flag day 2020's size: no IP
/// fragments, and rarely a truncated answer).
package enum DNSQuery {
    /// The UDP payload EDNS offers.
    package static let ednsPayloadSize: UInt16 = 1232

    /// The query's bytes; over TCP, `framed` puts RFC 7766's two-byte length before them. `nil`
    /// when `name` cannot be a question (``DNSName/wire(_:)``).
    package static func encode(id: UInt16, name: String, type: DNSRecordType, framed: Bool = false) -> [UInt8]? {
        guard let question = DNSName.wire(name) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 + 12 + question.count + 4 + 11)
        let length = 12 + question.count + 4 + 11
        if framed { append(UInt16(length), to: &bytes) }
        // ID; flags: RD; one question, no answer or authority, one additional (the OPT record).
        for field in [id, 0x0100, 1, 0, 0, 1] { append(field, to: &bytes) }
        bytes += question
        append(type.code, to: &bytes)
        append(1, to: &bytes)  // IN
        // OPT: the root name, type 41, the payload size as its class, a TTL of zero, no options.
        bytes.append(0)
        for field in [DNSRecord.optType, ednsPayloadSize, 0, 0, 0] { append(field, to: &bytes) }
        return bytes
    }

    private static func append(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }
}
