import Testing

@testable import ReachClient

/// The client's reading of an HTTP/1.1 answer, whichever way the bytes arrive: reachd's status
/// documents come with a length, its event stream chunked, and a connection may hand them over
/// a byte at a time.
@Suite("HTTP answers, as the client reads them")
struct HTTPResponseReaderTests {
    /// The parts of `answer`, fed whole and then a byte at a time: both must give the same.
    func parts(_ answer: String, closedAtEnd: Bool = false) throws -> [HTTPResponseReader.Part] {
        var whole = HTTPResponseReader()
        var parts = try whole.feed(Array(answer.utf8))
        if closedAtEnd { parts += try whole.finish() }
        var trickled = HTTPResponseReader()
        var bytewise: [UInt8] = []
        var ends = 0
        for byte in answer.utf8 {
            for part in try trickled.feed([byte]) {
                switch part {
                case .body(let bytes): bytewise += bytes
                case .end: ends += 1
                case .head: continue
                }
            }
        }
        if closedAtEnd { ends += try trickled.finish().count }
        #expect(bytewise == bytes(parts), "a byte at a time reads the same body")
        #expect(ends == parts.filter { $0 == .end }.count, "and ends as often")
        return parts
    }

    func bytes(_ parts: [HTTPResponseReader.Part]) -> [UInt8] {
        parts.flatMap { part -> [UInt8] in
            guard case .body(let bytes) = part else { return [] }
            return bytes
        }
    }

    func body(_ parts: [HTTPResponseReader.Part]) -> String {
        String(decoding: bytes(parts), as: UTF8.self)
    }

    @Test func aLengthDelimitedAnswerEndsAfterItsLength() throws {
        let parts = try parts("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 7\r\n\r\n{\"a\":1}")
        #expect(parts.first == .head(status: 200, reason: "OK"))
        #expect(body(parts) == "{\"a\":1}")
        #expect(parts.last == .end)
    }

    @Test func aChunkedAnswerIsJoinedAndEndsAtTheLastChunk() throws {
        let answer =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=x\r\nid: 1\r\nB\r\n\ndata: {}\n\n\r\n0\r\nTrailer: t\r\n\r\n"
        let parts = try parts(answer)
        #expect(body(parts) == "id: 1\ndata: {}\n\n")
        #expect(parts.last == .end)
    }

    @Test func informationalAnswersAreSkippedAndEmptyOnesEnd() throws {
        let parts = try parts("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
        #expect(parts == [.head(status: 204, reason: "No Content"), .end])
        #expect(try self.parts("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n").last == .end)
    }

    @Test func anAnswerWithoutALengthEndsWithTheConnection() throws {
        let parts = try parts("HTTP/1.1 200 OK\r\n\r\nall of it", closedAtEnd: true)
        #expect(body(parts) == "all of it")
        #expect(parts.last == .end)
    }

    @Test func anAnswerCutShortOrNotHTTPIsRefused() throws {
        var cut = HTTPResponseReader()
        _ = try cut.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort".utf8))
        #expect { try cut.finish() } throws: { ($0 as? HTTPResponseReader.Malformed)?.isCutShort == true }
        var garbage = HTTPResponseReader()
        #expect(throws: HTTPResponseReader.Malformed.self) { try garbage.feed(Array("SSH-2.0-OpenSSH\r\n\r\n".utf8)) }
        var badChunk = HTTPResponseReader()
        #expect(throws: HTTPResponseReader.Malformed.self) {
            try badChunk.feed(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8))
        }
        var endless = HTTPResponseReader()
        #expect(throws: HTTPResponseReader.Malformed.self) {
            try endless.feed([UInt8](repeating: 65, count: HTTPResponseReader.headLimit + 1))
        }
    }
}
