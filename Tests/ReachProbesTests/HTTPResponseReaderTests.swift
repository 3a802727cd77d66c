import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import ReachProbes

/// The probe's own reader of an answer, held to NIOHTTP1's decoder (llhttp), which it replaced:
/// the same status, `Location`, body and end on the same bytes, however they are cut into reads.
@Suite("HTTP response reader")
struct HTTPResponseReaderTests {
    /// What a reader made of an answer.
    enum Reading: Equatable {
        case answer(status: Int, location: String?, body: String)
        /// The connection closed with no answer begun.
        case nothing
        case malformed
    }

    static let answers: [String] = [
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
        "HTTP/1.1 302 Found\r\nLocation: http://portal.test/login\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 301 Moved\r\nlocation:   /elsewhere\r\nLOCATION: /second\r\ncontent-length: 3\r\n\r\nabc",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\n{\"st\r\nA\r\natus\":\"ok\"\r\n0\r\nX-Trailer: 1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "HTTP/1.0 200 OK\r\nServer: old\r\n\r\nto the close",
        "HTTP/1.1 200 OK\r\n\r\nalso to the close",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy",
        "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 304 Not Modified\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokAND MORE AFTER THE ANSWER",
        "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found",
        // Empty lines before the status line are skipped (found by fuzz-http-response-reader).
        "\r\nHTTP/1.1 302 Found\r\nLocation: /login\r\nContent-Length: 0\r\n\r\n",
        "\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        // Leading zeros are no more bytes: 19 digits of length, 17 of chunk size.
        "HTTP/1.1 200 OK\r\nContent-Length: 0000000000000000002\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000003\r\nabc\r\n0\r\n\r\n",
        // Not HTTP, or HTTP cut short.
        "\u{0}\u{FF} garbage, not HTTP \u{1}\r\n\r\n",
        "HTTP/1.1 2OO OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
        "HTTP/1.1 200 OK\r\nContent-Le",
        "",
    ]

    @Test(arguments: answers)
    func readsWhatNIOHTTP1Reads(_ answer: String) throws {
        let bytes = Array(answer.utf8)
        let expected = try Self.decodedByNIOHTTP1(bytes)
        #expect(Self.read(bytes, cutEvery: bytes.count + 1) == expected, "in one read")
        #expect(Self.read(bytes, cutEvery: 1) == expected, "a byte a read")
        for cut in 1..<max(bytes.count, 1) {
            let pieces = [Array(bytes[..<cut]), Array(bytes[cut...])]
            #expect(Self.read(pieces) == expected, "cut after \(cut) bytes")
        }
    }

    @Test func aSwitchingProtocolsAnswerEndsAtItsHead() {
        #expect(
            Self.read(Array("HTTP/1.1 101 Switching\r\nUpgrade: x\r\n\r\nother protocol".utf8))
                == .answer(status: 101, location: nil, body: "")
        )
    }

    /// RFC 9110 §5.5: the whitespace around a field value is not part of it. llhttp kept the
    /// trailing one, which then showed in the failure's detail ("redirected to /login  ").
    @Test func theWhitespaceAroundALocationIsNotPartOfIt() {
        let answer = "HTTP/1.1 302 Found\r\nLocation: \t/login  \r\nContent-Length: 0\r\n\r\n"
        #expect(Self.read(Array(answer.utf8)) == .answer(status: 302, location: "/login", body: ""))
    }

    @Test func bareLineFeedsEndLinesToo() {
        let answer = "HTTP/1.1 302 Found\nLocation: /login\nContent-Length: 2\n\nok"
        #expect(Self.read(Array(answer.utf8), cutEvery: 3) == .answer(status: 302, location: "/login", body: "ok"))
    }

    @Test func aHeadLongerThanTheLimitIsNotAnAnswer() {
        let filler = String(repeating: "X-Filler: \(String(repeating: "a", count: 1_000))\r\n", count: 70)
        let answer = "HTTP/1.1 200 OK\r\n\(filler)Content-Length: 0\r\n\r\n"
        #expect(Self.read(Array(answer.utf8), cutEvery: 4_096) == .malformed)
        #expect(Self.read(Array(answer.utf8)) == .malformed, "in one read too")
    }

    @Test func theBodyIsHandedOnAsItArrivesAndEndsOnce() throws {
        var reader = HTTPResponseReader()
        var first = ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc")
        #expect(try reader.next(from: &first) == .head(status: 200, location: nil))
        #expect(try reader.next(from: &first) == .body(ByteBuffer(string: "abc")))
        #expect(try reader.next(from: &first) == nil)
        #expect(!reader.isDone)
        var second = ByteBuffer(string: "defghi")
        #expect(try reader.next(from: &second) == .body(ByteBuffer(string: "def")))
        #expect(try reader.next(from: &second) == .end)
        #expect(try reader.next(from: &second) == nil)
        #expect(second.readableBytes == 0, "what follows the answer is dropped")
        #expect(try reader.closed() == nil, "the close after the end adds nothing")
    }

    // MARK: The two readers

    /// `bytes` through ``HTTPResponseReader`` in reads of `cutEvery` bytes, then the close.
    static func read(_ bytes: [UInt8], cutEvery: Int) -> Reading {
        read(stride(from: 0, to: bytes.count, by: cutEvery).map { Array(bytes[$0..<min($0 + cutEvery, bytes.count)]) })
    }

    static func read(_ bytes: [UInt8]) -> Reading { read([bytes]) }

    static func read(_ pieces: [[UInt8]]) -> Reading {
        var reader = HTTPResponseReader()
        var answer = Answer()
        do {
            for piece in pieces {
                var buffer = ByteBuffer(bytes: piece)
                while let part = try reader.next(from: &buffer) { answer.take(part) }
            }
            if let part = try reader.closed() { answer.take(part) }
        } catch {
            return .malformed
        }
        return answer.reading
    }

    /// `bytes` through NIOHTTP1's client pipeline after a `GET`, then the close: the reference.
    static func decodedByNIOHTTP1(_ bytes: [UInt8]) throws -> Reading {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHTTPClientHandlers()
        try channel.writeOutbound(
            HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"))
        )
        try channel.writeOutbound(HTTPClientRequestPart.end(nil))
        // An error after the answer's end (llhttp reading what follows as a next answer) came
        // after the probe had settled: only an answer that did not end is malformed.
        var failed = false
        do { try channel.writeInbound(ByteBuffer(bytes: bytes)) } catch { failed = true }
        _ = try? channel.close().wait()
        do { try channel.throwIfErrorCaught() } catch { failed = true }
        var answer = Answer()
        while let part = try channel.readInbound(as: HTTPClientResponsePart.self) {
            switch part {
            case .head(let head):
                // The prober skipped interim answers.
                if head.status.code < 200, head.status != .switchingProtocols { continue }
                answer.take(.head(status: Int(head.status.code), location: head.headers.first(name: "location")))
            case .body(let body): answer.take(.body(body))
            case .end: answer.take(.end)
            }
        }
        return failed && !answer.ended ? .malformed : answer.reading
    }

    /// The parts of one answer, gathered.
    struct Answer {
        var status: Int?
        var location: String?
        var body = ""
        var ended = false

        mutating func take(_ part: HTTPResponseReader.Part) {
            switch part {
            case .head(let status, let location):
                self.status = status
                self.location = location
            case .body(let bytes): body += String(buffer: bytes)
            case .end: ended = true
            }
        }

        var reading: Reading {
            guard let status else { return .nothing }
            return ended ? .answer(status: status, location: location, body: body) : .malformed
        }
    }
}
