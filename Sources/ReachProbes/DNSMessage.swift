import ReachCore

/// A DNS message as reachd reads a resolver's answer (RFC 1035 §4, EDNS's OPT of RFC 6891): the
/// header, the questions and the three record sections, every byte read by ``DNSMessageReader``
/// with its bounds checked, never trusted.
package struct DNSMessage: Sendable, Hashable {
    /// A question: the name, the type and the class asked for.
    package struct Question: Sendable, Hashable {
        package var name: String
        package var type: UInt16
        package var recordClass: UInt16

        package init(name: String, type: UInt16, recordClass: UInt16) {
            self.name = name
            self.type = type
            self.recordClass = recordClass
        }
    }

    package var id: UInt16
    /// QR, the opcode, AA, TC, RD, RA, Z, AD, CD and the header's four bits of the response code.
    package var flags: UInt16
    package var questions: [Question]
    package var answers: [DNSRecord]
    package var authorities: [DNSRecord]
    package var additionals: [DNSRecord]

    /// Whether it is an answer (QR), not a query.
    package var isResponse: Bool { flags & 0x8000 != 0 }
    /// The operation: 0 for a standard query.
    package var opcode: UInt16 { (flags >> 11) & 0xF }
    /// Whether the server cut the answer to fit a datagram (TC): the whole one is had over TCP.
    package var isTruncated: Bool { flags & 0x0200 != 0 }

    /// The response code, with the eight high bits EDNS's OPT record carries (in its TTL's top byte).
    package var responseCode: DNSResponseCode {
        let extended = additionals.first { $0.type == DNSRecord.optType }.map { UInt16($0.ttl >> 24) } ?? 0
        return DNSResponseCode(extended << 4 | flags & 0xF)
    }

    /// Reads a whole message; anything out of bounds, left over, or not a message throws, with
    /// where and why.
    package static func parse(_ bytes: [UInt8]) throws(DNSMessageError) -> DNSMessage {
        var reader = DNSMessageReader(bytes)
        let id = try reader.uint16()
        let flags = try reader.uint16()
        let counts = [try reader.uint16(), try reader.uint16(), try reader.uint16(), try reader.uint16()]
        var questions: [Question] = []
        // A question takes 5 bytes at least, a record 11: no count makes more room than the bytes fill.
        questions.reserveCapacity(min(Int(counts[0]), reader.remaining / 5))
        for _ in 0..<counts[0] {
            let name = try reader.name()
            questions.append(Question(name: name, type: try reader.uint16(), recordClass: try reader.uint16()))
        }
        var sections: [[DNSRecord]] = []
        for count in counts.dropFirst() {
            var records: [DNSRecord] = []
            records.reserveCapacity(min(Int(count), reader.remaining / 11))
            for _ in 0..<count { records.append(try reader.record()) }
            sections.append(records)
        }
        guard reader.remaining == 0 else { throw DNSMessageError(.trailingBytes, at: reader.offset) }
        return DNSMessage(
            id: id,
            flags: flags,
            questions: questions,
            answers: sections[0],
            authorities: sections[1],
            additionals: sections[2]
        )
    }
}

/// Why a message could not be read, and at which byte: the `detail` of a `malformed_answer`.
package struct DNSMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Kind: Sendable, Hashable {
        /// The message ends before what its header or a length says is there.
        case endsEarly
        /// A compression pointer that does not point back before itself: a loop, or garbage.
        case pointerNotBackward
        /// More pointers in one name than a name of 255 bytes can need.
        case tooManyPointers
        /// A name longer than 255 bytes.
        case nameTooLong
        /// A label whose two top bits are 01 or 10 (reserved, or the withdrawn extended labels).
        case reservedLabelType
        /// A record's data does not fill its length as its type says (an A record of 5 bytes).
        case badRecordData
        /// Bytes after the last record the header counts.
        case trailingBytes
    }

    package var kind: Kind
    /// The byte where reading failed.
    package var offset: Int

    package init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    package var description: String {
        let what =
            switch kind {
            case .endsEarly: "the message ends early"
            case .pointerNotBackward: "a name's compression pointer does not point back"
            case .tooManyPointers: "a name follows too many compression pointers"
            case .nameTooLong: "a name is longer than 255 bytes"
            case .reservedLabelType: "a name has a label of a reserved type"
            case .badRecordData: "a record's data does not match its type"
            case .trailingBytes: "bytes follow the last record"
            }
        return "\(what) (byte \(offset))"
    }
}
