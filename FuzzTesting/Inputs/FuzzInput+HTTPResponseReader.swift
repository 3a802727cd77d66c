import NIOCore
import NIOEmbedded
import NIOHTTP1
import ReachProbes

extension FuzzInput {
    /// A server's bytes after a probe's `GET`, through the probe's own answer reader
    /// (`HTTPResponseReader`), held to NIOHTTP1's decoder (llhttp), which it replaced and which
    /// swift-nio fuzzes: wherever llhttp reads a whole answer, the reader reads the same status,
    /// `Location` (less the whitespace around it, RFC 9110 §5.5) and body.
    ///
    /// The first byte says how to cut the rest into reads, as TCP might; the reader's answer must
    /// not depend on where the reads end. Its parts come in order (the head once, then the body,
    /// then the end once, then nothing), and the body it hands on is never more than what arrived:
    /// it keeps no body of its own (the prober keeps at most 1 MiB of it, ``HTTPProber``).
    package static func httpResponseReader(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let answer = Array(bytes.dropFirst())
        let whole = readAnswer([answer])
        let chunk = Int(first) + 1
        let pieces = stride(from: 0, to: answer.count, by: chunk).map {
            Array(answer[$0..<min($0 + chunk, answer.count)])
        }
        let cut = readAnswer(pieces)
        require(whole == cut, "the answer depends on where the reads end: \(whole) in one read, \(cut) in \(chunk)s")
        if case .answer(_, _, let body) = whole {
            require(body.count <= answer.count, "\(body.count) bytes of body from \(answer.count) bytes")
        }
        // A bare CR in the head is invalid (RFC 9112 §2.2: a recipient must treat it so, or read it
        // as a space): the reader refuses such an answer, where llhttp took the CRs as line ends.
        guard !hasBareCRInHead(answer), case .answer(let status, let location, let body) = decodedByNIOHTTP1(answer)
        else { return }
        require(
            whole == .answer(status: status, location: location.map(withoutBlanksAround), body: body),
            "llhttp read \(status), \(String(describing: location)), \(body.count) bytes of body; the reader \(whole)"
        )
    }

    /// What a reader made of the bytes a server sent, then closed.
    enum ReadAnswer: Equatable {
        case answer(status: Int, location: String?, body: [UInt8])
        /// The connection closed with no answer begun.
        case nothing
        case malformed
    }

    /// `pieces` through `HTTPResponseReader`, one read each, then the close.
    static func readAnswer(_ pieces: [[UInt8]]) -> ReadAnswer {
        var reader = HTTPResponseReader()
        var answer = AnswerParts()
        do {
            for piece in pieces {
                var buffer = ByteBuffer(bytes: piece)
                while let part = try reader.next(from: &buffer) { answer.take(part) }
                require(buffer.readableBytes == 0, "the reader left \(buffer.readableBytes) bytes of a read unread")
            }
            if let part = try reader.closed() { answer.take(part) }
        } catch {
            return .malformed
        }
        return answer.reading
    }

    /// `bytes` through NIOHTTP1's client pipeline after a `GET`, then the close, as the prober used
    /// it: interim answers (1xx but 101) skipped, the first whole answer kept, an error before its
    /// end malformed (an error after it, llhttp reading what follows as a next answer, came after the
    /// probe had settled).
    static func decodedByNIOHTTP1(_ bytes: [UInt8]) -> ReadAnswer {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        do {
            try channel.pipeline.syncOperations.addHTTPClientHandlers()
            try channel.writeOutbound(
                HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"))
            )
            try channel.writeOutbound(HTTPClientRequestPart.end(nil))
        } catch {
            preconditionFailure("fuzz invariant broken: NIOHTTP1's pipeline cannot be set up: \(error)")
        }
        var failed = false
        do { try channel.writeInbound(ByteBuffer(bytes: bytes)) } catch { failed = true }
        _ = try? channel.close().wait()
        do { try channel.throwIfErrorCaught() } catch { failed = true }
        var answer = AnswerParts()
        var interim = false
        while let part = try? channel.readInbound(as: HTTPClientResponsePart.self), !answer.ended {
            switch part {
            case .head(let head):
                interim = head.status.code < 200 && head.status != .switchingProtocols
                if !interim {
                    answer.take(.head(status: Int(head.status.code), location: head.headers.first(name: "location")))
                }
            case .body(let body): if !interim { answer.take(.body(body)) }
            case .end: if !interim { answer.take(.end) }
            }
        }
        return failed && !answer.ended ? .malformed : answer.reading
    }

    /// Whether a CR not followed by LF comes before the head's end (the first empty line after one
    /// that is not: empty lines before the status line are skipped).
    static func hasBareCRInHead(_ bytes: [UInt8]) -> Bool {
        let (cr, lf) = (UInt8(ascii: "\r"), UInt8(ascii: "\n"))
        var (lineHasText, headBegun) = (false, false)
        for (index, byte) in bytes.enumerated() {
            if byte == cr, index + 1 == bytes.count || bytes[index + 1] != lf { return true }
            if byte == lf {
                if headBegun && !lineHasText { return false }
                lineHasText = false
            } else if byte != cr {
                (lineHasText, headBegun) = (true, true)
            }
        }
        return false
    }

    /// `value` without the spaces and tabs around it.
    static func withoutBlanksAround(_ value: String) -> String {
        let bytes = Array(value.utf8)
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let start = bytes.firstIndex(where: { !isBlank($0) }), let end = bytes.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return text(bytes[start...end])
    }

    /// The parts of one answer, gathered, checking their order.
    struct AnswerParts {
        var status: Int?
        var location: String?
        var body: [UInt8] = []
        var ended = false

        mutating func take(_ part: HTTPResponseReader.Part) {
            require(!ended, "a part after the answer's end: \(part)")
            switch part {
            case .head(let status, let location):
                require(self.status == nil, "a second head: \(status) after \(self.status ?? 0)")
                self.status = status
                self.location = location
            case .body(let bytes):
                require(status != nil, "a body before the head")
                body += bytes.readableBytesView
            case .end:
                require(status != nil, "an end before the head")
                ended = true
            }
        }

        var reading: ReadAnswer {
            guard let status else { return .nothing }
            return ended ? .answer(status: status, location: location, body: body) : .malformed
        }
    }
}
