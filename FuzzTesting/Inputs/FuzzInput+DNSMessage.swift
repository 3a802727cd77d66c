import ReachCore
import ReachProbes

extension FuzzInput {
    /// A resolver's answer, as a `dns` probe reads it (`DNSMessage.parse`), then judged against a
    /// question about the name it carries (`DNSCheck.failure(of:)`), and every record's data put
    /// in words.
    ///
    /// Reading is deterministic; a name stays within 255 bytes on the wire (escaped, at most four
    /// characters a byte) and never holds a control character or a space (a TXT string keeps its
    /// spaces, never a control character); a message that parses holds no
    /// more records than its bytes can (11 bytes each at the least).
    package static func dnsMessage(_ bytes: [UInt8]) {
        guard let message = try? DNSMessage.parse(bytes) else { return }
        require((try? DNSMessage.parse(bytes)) == message, "the same bytes parsed to another message")
        let records = message.answers + message.authorities + message.additionals
        require(records.count * 11 + message.questions.count * 5 <= bytes.count, "more records than bytes")
        let names = message.questions.map(\.name) + records.map(\.name)
        for name in names {
            require(name.utf8.count <= 4 * DNSName.maximumLength, "a name longer than 255 bytes: \(name)")
            require(name.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) }, "a name unescaped: \(name)")
        }
        for record in records {
            let text = record.data.text
            require(text.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) }, "data unescaped: \(text)")
        }
        if let question = message.questions.first {
            for type in DNSRecordType.allCases {
                let check = DNSCheck(
                    query: question.name,
                    recordType: type,
                    expectation: DNSExpectation(answerContains: "192.0.2.10")
                )
                _ = check.failure(of: message)
            }
        }
    }
}
