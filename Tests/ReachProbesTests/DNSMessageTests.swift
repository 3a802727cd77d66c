import Foundation
import ReachCore
import ReachProbes
import ReachSupport
import Testing

/// The DNS codec: reachd's own reading of every byte of an answer. Real answers recorded from
/// dnsmasq and unbound (FuzzTesting/Corpora/dns-message, by FuzzTesting/record-dns-answers.py), and
/// answers made by hand to break each bound: compression loops and forward pointers, names past
/// 255 bytes, reserved label types, records longer or shorter than their data.
@Suite("DNS messages, read byte by byte")
struct DNSMessageTests {
    static let corpus = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "FuzzTesting/Corpora/dns-message")

    static func recorded(_ name: String) throws -> DNSMessage {
        try DNSMessage.parse(Array(try Data(contentsOf: corpus.appending(path: name + ".bin"))))
    }

    static func check(
        _ query: String,
        _ type: DNSRecordType,
        contains: String? = nil,
        rcode: DNSResponseCode = .noError
    )
        -> DNSCheck
    {
        DNSCheck(
            query: query,
            recordType: type,
            expectation: DNSExpectation(responseCode: rcode, answerContains: contains)
        )
    }

    @Test(arguments: ["dnsmasq", "unbound"])
    func everyRecordedAnswerReadsAsTheResolverMeantIt(resolver: String) throws {
        let a = try Self.recorded("\(resolver)-A-api.corpus.test")
        #expect(a.isResponse && !a.isTruncated && a.responseCode == .noError)
        #expect(a.questions == [DNSMessage.Question(name: "api.corpus.test", type: 1, recordClass: 1)])
        #expect(a.answers.map(\.data) == [.address(IPAddress("192.0.2.10")!)])
        #expect(a.additionals.contains { $0.type == DNSRecord.optType }, "EDNS answered with EDNS")
        let aaaa = try Self.recorded("\(resolver)-AAAA-api.corpus.test")
        #expect(aaaa.answers.map(\.data) == [.address(IPAddress("2001:db8::10")!)])
        // dnsmasq follows the CNAME to the A record; unbound's local data answers the CNAME alone.
        let cname = try Self.recorded("\(resolver)-A-www.corpus.test")
        #expect(
            cname.answers.map(\.data.text)
                == (resolver == "dnsmasq" ? ["api.corpus.test", "192.0.2.10"] : ["api.corpus.test"])
        )
        #expect(try Self.recorded("\(resolver)-MX-corpus.test").answers.map(\.data.text) == ["10 mail.corpus.test"])
        #expect(
            try Self.recorded("\(resolver)-TXT-corpus.test").answers.map(\.data)
                == [.text([Array("v=spf1 -all".utf8), Array("second string".utf8)])]
        )
        #expect(
            try Self.recorded("\(resolver)-SRV-_sip._tcp.corpus.test").answers.map(\.data.text)
                == ["10 5 5060 sip.corpus.test"]
        )
        #expect(
            try Self.recorded("\(resolver)-PTR-10.2.0.192.in-addr.arpa").answers.map(\.data.text) == ["api.corpus.test"]
        )
        #expect(try Self.recorded("\(resolver)-A-missing.corpus.test").responseCode == .nonExistentDomain)
        let truncated = try Self.recorded("\(resolver)-TXT-big.corpus.test-no-edns")
        #expect(truncated.isTruncated)
        let whole = try Self.recorded("\(resolver)-TXT-big.corpus.test-tcp")
        #expect(!whole.isTruncated && whole.answers.count == 40, "\(whole.answers.count) records over TCP")
    }

    @Test func unboundsZoneRecordsAndItsErrors() throws {
        #expect(
            try Self.recorded("unbound-SOA-corpus.test").answers.map(\.data.text)
                == ["ns1.corpus.test hostmaster.corpus.test 2024010101 3600 600 86400 300"]
        )
        #expect(try Self.recorded("unbound-NS-corpus.test").answers.map(\.data.text) == ["ns1.corpus.test"])
        #expect(try Self.recorded("unbound-A-outside.example").responseCode == .serverFailure)
        let refused = try Self.recorded("unbound-A-api.corpus.test-refused")
        #expect(refused.responseCode == .refused && refused.questions.isEmpty, "refused without the question")
        #expect(try Self.recorded("dnsmasq-A-outside.example").responseCode == .refused)
    }

    @Test func recordedAnswersAreJudgedWithTheirOwnReasons() throws {
        let api = try Self.recorded("unbound-A-api.corpus.test")
        #expect(Self.check("api.corpus.test", .a).failure(of: api) == nil)
        #expect(Self.check("api.corpus.test", .a, contains: "192.0.2.10").failure(of: api) == nil)
        #expect(Self.check("API.corpus.test.", .a, contains: "192.0.2.10").failure(of: api) == nil, "names ignore case")
        let other = Self.check("api.corpus.test", .a, contains: "192.0.2.1").failure(of: api)
        #expect(other?.reason == .unexpectedAnswer, "192.0.2.1 is not 192.0.2.10")
        #expect(other?.detail == "no record holds 192.0.2.1; the answer: 192.0.2.10")
        #expect(
            Self.check("www.corpus.test", .a, contains: "api.corpus.test").failure(
                of: try Self.recorded("dnsmasq-A-www.corpus.test")
            ) == nil
        )
        #expect(
            Self.check("corpus.test", .txt, contains: "v=spf1").failure(
                of: try Self.recorded("dnsmasq-TXT-corpus.test")
            ) == nil
        )
        #expect(
            Self.check("192.0.2.10", .ptr, contains: "api.corpus.test").failure(
                of: try Self.recorded("unbound-PTR-10.2.0.192.in-addr.arpa")
            ) == nil
        )
        let missing = try Self.recorded("dnsmasq-A-missing.corpus.test")
        #expect(Self.check("missing.corpus.test", .a).failure(of: missing)?.reason == .nxdomain)
        #expect(Self.check("missing.corpus.test", .a, rcode: .nonExistentDomain).failure(of: missing) == nil)
        #expect(
            Self.check("api.corpus.test", .a, rcode: .nonExistentDomain).failure(of: api)?.reason == .unexpectedAnswer
        )
        #expect(
            Self.check("outside.example", .a).failure(of: try Self.recorded("unbound-A-outside.example"))?.reason
                == .servfail
        )
        #expect(
            Self.check("outside.example", .a).failure(of: try Self.recorded("dnsmasq-A-outside.example"))?.reason
                == .dnsRefused
        )
        #expect(
            Self.check("api.corpus.test", .a).failure(of: try Self.recorded("unbound-A-api.corpus.test-refused"))?
                .reason == .dnsRefused
        )
        let noData = Self.check("api.corpus.test", .mx).failure(of: try Self.recorded("unbound-MX-api.corpus.test"))
        #expect(noData?.reason == .unexpectedAnswer && noData?.detail == "no MX record for api.corpus.test", "NODATA")
        let elsewhere = Self.check("other.corpus.test", .a).failure(of: api)
        #expect(elsewhere?.reason == .malformedAnswer, "an answer to another question")
    }

    @Test func theQueryIsAMessageTheReaderReadsBack() throws {
        let bytes = try #require(DNSQuery.encode(id: 0xBEEF, name: "api.corpus.test", type: .aaaa))
        let query = try DNSMessage.parse(bytes)
        #expect(query.id == 0xBEEF && !query.isResponse && query.flags == 0x0100)
        #expect(query.questions == [DNSMessage.Question(name: "api.corpus.test", type: 28, recordClass: 1)])
        #expect(query.additionals.map(\.recordClass) == [DNSQuery.ednsPayloadSize])
        let framed = try #require(DNSQuery.encode(id: 1, name: "api.corpus.test.", type: .a, framed: true))
        #expect(Int(framed[0]) << 8 | Int(framed[1]) == framed.count - 2)
        #expect(DNSQuery.encode(id: 1, name: String(repeating: "a", count: 64) + ".test", type: .a) == nil)
        #expect(DNSQuery.encode(id: 1, name: "a..test", type: .a) == nil)
        #expect(
            try DNSMessage.parse(try #require(DNSQuery.encode(id: 1, name: ".", type: .ns))).questions.first?.name
                == "."
        )
    }

    // MARK: Made to break a bound

    /// A response header with these counts, then `body`.
    static func message(questions: UInt16 = 1, answers: UInt16 = 0, _ body: [UInt8]) -> [UInt8] {
        [0x12, 0x34, 0x81, 0x80, 0, UInt8(questions), 0, UInt8(answers), 0, 0, 0, 0] + body
    }

    static let question: [UInt8] = [3] + Array("api".utf8) + [4] + Array("test".utf8) + [0, 0, 1, 0, 1]

    func failure(_ bytes: [UInt8]) -> DNSMessageError.Kind? {
        do {
            _ = try DNSMessage.parse(bytes)
            return nil
        } catch {
            return error.kind
        }
    }

    @Test func aPointerToItselfOrForwardIsRefused() {
        // The name at 12 is a pointer to 12: itself.
        #expect(failure(Self.message([0xC0, 12, 0, 1, 0, 1])) == .pointerNotBackward)
        #expect(failure(Self.message([0xC0, 30, 0, 1, 0, 1])) == .pointerNotBackward)
    }

    @Test func aLoopOfBackwardPointersEndsAtTheNameLimit() {
        // At 12: label "a", then a pointer back to 12: a.a.a.… until 255 bytes.
        #expect(failure(Self.message([1, 0x61, 0xC0, 12, 0, 1, 0, 1])) == .nameTooLong)
        // Pointers to pointers, each back: 14 → 12 → 14 cannot be built, 14 → 12 → (header) is read and bounded.
        #expect(failure(Self.message([0xC0, 2, 0xC0, 12, 0, 1, 0, 1])) != nil)
    }

    @Test func namesAndLabelsAreBounded() {
        let label: [UInt8] = [63] + [UInt8](repeating: 0x61, count: 63)
        let long: [UInt8] = label + label + label + label + [0, 0, 1, 0, 1]
        #expect(failure(Self.message(long)) == .nameTooLong, "4 × 64 bytes is past 255")
        #expect(failure(Self.message([0x40, 0, 0, 1, 0, 1])) == .reservedLabelType)
        #expect(failure(Self.message([0x80, 0, 0, 1, 0, 1])) == .reservedLabelType)
        #expect(failure(Self.message([5, 0x61, 0x62])) == .endsEarly, "a label past the end")
        #expect(failure(Self.message([0xC0])) == .endsEarly, "half a pointer")
    }

    @Test func countsAndLengthsAreClaimsToCheck() {
        #expect(failure([0x12, 0x34, 0x81]) == .endsEarly, "a header cut short")
        #expect(failure(Self.message(questions: 2, Self.question)) == .endsEarly, "two questions counted, one there")
        #expect(failure(Self.message(Self.question + [0])) == .trailingBytes)
        let record: [UInt8] = [0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60]
        #expect(
            failure(Self.message(answers: 1, Self.question + record + [0, 5, 192, 0, 2, 1, 9])) == .badRecordData,
            "an A of 5 bytes"
        )
        #expect(
            failure(Self.message(answers: 1, Self.question + record + [0, 9, 192, 0])) == .endsEarly,
            "rdata past the end"
        )
        // A CNAME whose name runs past its length into the next bytes.
        let cname: [UInt8] = [0xC0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 2, 3, 0x61, 0x62, 0x63, 0]
        #expect(failure(Self.message(answers: 1, Self.question + cname)) == .badRecordData)
        // A TXT whose string claims more than the record holds.
        let txt: [UInt8] = [0xC0, 12, 0, 16, 0, 1, 0, 0, 0, 60, 0, 3, 9, 0x61, 0x62]
        #expect(failure(Self.message(answers: 1, Self.question + txt)) == .endsEarly)
        let valid: [UInt8] = [0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1]
        #expect(failure(Self.message(answers: 1, Self.question + valid)) == nil)
    }

    @Test func controlBytesInANameAreEscapedNeverPrinted() throws {
        let hostile: [UInt8] = [4, 0x1B, 0x5B, 0x2E, 0x5C, 0] + [0, 1, 0, 1]
        let message = try DNSMessage.parse(Self.message(hostile))
        #expect(message.questions.first?.name == "\\027[\\.\\\\")
        #expect(DNSRecordData.other([0xDE, 0xAD]).text == "\\# 2 DEAD")
    }
}
