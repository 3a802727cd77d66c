import NIOCore

/// Reads the one HTTP/1.x answer to a probe's `GET`, as its bytes arrive: the status, the
/// `Location` a redirect names, the body, and where the answer ends. What a probe judges, and
/// nothing more: other headers are skipped unread.
///
/// It replaces NIOHTTP1's response decoder (llhttp, its callbacks, a header list and a message per
/// part, one `ByteToMessageHandler` more in the pipeline): about a fifth of a probe's instructions
/// for two headers nobody else read (docs/performance.md, *Instructions per probe*). The body ends
/// as RFC 9112 §6.3 says for the answer to a `GET`: no body for 1xx, 204 and 304; chunked when the
/// last transfer coding is `chunked`; else `Content-Length`; else at the close. Interim answers
/// (1xx but 101) are skipped, and so are empty lines before a status line; a 101 ends the answer
/// at its head. Bytes after the answer are dropped. Anything else is ``Malformed``, as llhttp's
/// refusals were: a status line that is not HTTP's, a header line without a colon, a
/// `Content-Length` that is not one number, a chunk size that is not hexadecimal, a head over
/// 64 KiB, or a close before the end.
package struct HTTPResponseReader {
    /// One step of the answer, in order: its head once, its body in pieces, its end once.
    package enum Part: Equatable {
        case head(status: Int, location: String?)
        case body(ByteBuffer)
        case end
    }

    /// The bytes are not an HTTP answer.
    package struct Malformed: Error, Equatable {}

    /// The longest head (status line and headers) read, and the longest chunk-size or trailer line.
    static let headLimit = 64 * 1024

    private enum Stage: Equatable {
        /// Waiting for the end of the head (or of an interim answer's).
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        /// The CRLF after a chunk's data.
        case chunkEnd
        case trailers
        case untilClose
        case done
    }

    private var stage = Stage.head
    /// A line or head not yet whole, kept across reads; `nil` when a read ended on a boundary.
    private var pending: ByteBuffer?
    /// Whether any byte of the answer arrived: a close before one is not a malformed answer.
    private(set) var hasStarted = false

    package init() {}

    /// Whether the answer has ended.
    var isDone: Bool { stage == .done }

    /// The next part found in what has arrived, consuming `bytes`; `nil` when more bytes are needed
    /// (all of `bytes` is then consumed) or the answer is done. Call until it answers `nil`.
    package mutating func next(from bytes: inout ByteBuffer) throws(Malformed) -> Part? {
        while true {
            switch stage {
            case .done:
                bytes.moveReaderIndex(to: bytes.writerIndex)
                return nil
            case .head:
                guard bytes.readableBytes > 0 || pending != nil else { return nil }
                hasStarted = true
                if pending == nil {
                    // Empty lines before a status line are skipped, as llhttp skipped them.
                    let emptyLines = bytes.readableBytesView.prefix {
                        $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n")
                    }
                    bytes.moveReaderIndex(forwardBy: emptyLines.count)
                    guard bytes.readableBytes > 0 else { return nil }
                }
                guard let head = try line(from: &bytes, endingWithEmptyLine: true) else { return nil }
                if let part = try readHead(head) { return part }
            case .fixedBody(let remaining):
                guard remaining > 0 else {
                    stage = .done
                    return .end
                }
                guard bytes.readableBytes > 0, let piece = bytes.readSlice(length: min(remaining, bytes.readableBytes))
                else { return nil }
                stage = .fixedBody(remaining: remaining - piece.readableBytes)
                return .body(piece)
            case .chunkSize:
                guard let line = try line(from: &bytes) else { return nil }
                let size = try Self.chunkSize(line)
                stage = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                guard bytes.readableBytes > 0, let piece = bytes.readSlice(length: min(remaining, bytes.readableBytes))
                else { return nil }
                let left = remaining - piece.readableBytes
                stage = left == 0 ? .chunkEnd : .chunkData(remaining: left)
                return .body(piece)
            case .chunkEnd:
                guard let line = try line(from: &bytes) else { return nil }
                guard line.readableBytes == 0 else { throw Malformed() }
                stage = .chunkSize
            case .trailers:
                guard let line = try line(from: &bytes) else { return nil }
                if line.readableBytes == 0 {
                    stage = .done
                    return .end
                }
            case .untilClose:
                guard bytes.readableBytes > 0, let piece = bytes.readSlice(length: bytes.readableBytes) else {
                    return nil
                }
                return .body(piece)
            }
        }
    }

    /// The connection closed: the end of a body that runs to the close, `nil` when the answer had
    /// ended or never began, ``Malformed`` when it was cut short.
    package mutating func closed() throws(Malformed) -> Part? {
        switch stage {
        case .done: return nil
        case .untilClose:
            stage = .done
            return .end
        case .head where !hasStarted: return nil
        default:
            stage = .done
            throw Malformed()
        }
    }

    // MARK: Lines

    /// The next line (without its CR LF or bare LF), or with `endingWithEmptyLine` the whole head
    /// up to and without its empty line; `nil` until it has arrived, keeping what did in ``pending``.
    private mutating func line(
        from bytes: inout ByteBuffer,
        endingWithEmptyLine: Bool = false
    ) throws(Malformed)
        -> ByteBuffer?
    {
        // What is already pending was searched: start where it ends, less the line end it may split.
        var searchedBefore = 0
        if var kept = pending {
            searchedBefore = max(kept.readableBytes - 3, 0)
            pending = nil
            kept.writeBuffer(&bytes)
            bytes = kept
        }
        guard let (length, terminator) = Self.lineEnd(in: bytes, from: searchedBefore, empty: endingWithEmptyLine)
        else {
            // Up to 3 bytes may be the start of the line end: the same answer is refused however it is cut.
            guard bytes.readableBytes <= Self.headLimit + 3 else { throw Malformed() }
            pending = bytes
            bytes.moveReaderIndex(to: bytes.writerIndex)
            return nil
        }
        guard length <= Self.headLimit else { throw Malformed() }
        let line = bytes.readSlice(length: length)!
        bytes.moveReaderIndex(forwardBy: terminator)
        return line
    }

    /// Where the first line end (or, with `empty`, the first empty line) is in `bytes` at or after
    /// `start`: the length before it and the terminator's length.
    private static func lineEnd(in bytes: ByteBuffer, from start: Int, empty: Bool) -> (Int, Int)? {
        bytes.withUnsafeReadableBytes { raw -> (Int, Int)? in
            var index = start
            while index < raw.count {
                guard raw[index] == UInt8(ascii: "\n") else {
                    index += 1
                    continue
                }
                let lineStart = index > 0 && raw[index - 1] == UInt8(ascii: "\r") ? index - 1 : index
                if !empty { return (lineStart, index + 1 - lineStart) }
                // An empty line: this line end follows another one directly.
                if lineStart > 0, raw[lineStart - 1] == UInt8(ascii: "\n") {
                    let headEnd =
                        lineStart - 1 > 0 && raw[lineStart - 2] == UInt8(ascii: "\r") ? lineStart - 2 : lineStart - 1
                    return (headEnd, index + 1 - headEnd)
                }
                index += 1
            }
            return nil
        }
    }

    // MARK: The head

    /// What a head says about its answer.
    private struct Head {
        var status = 0
        var location: String?
        var contentLength: Int?
        var hasTransferEncoding = false
        var chunked = false
    }

    /// Reads a whole head and decides how its body is framed: its part, or `nil` for an interim answer.
    private mutating func readHead(_ bytes: ByteBuffer) throws(Malformed) -> Part? {
        let head = try bytes.withUnsafeReadableBytes { raw in Result { () throws(Malformed) in try Self.head(raw) } }
            .get()
        switch head.status {
        case 100..<200 where head.status != 101:
            // Interim: the answer's own head follows.
            return nil
        case 101, 204, 304:
            // No body: a 101's bytes after the head are another protocol's.
            stage = .fixedBody(remaining: 0)
        default:
            if head.hasTransferEncoding {
                stage = head.chunked ? .chunkSize : .untilClose
            } else if let contentLength = head.contentLength {
                stage = .fixedBody(remaining: contentLength)
            } else {
                stage = .untilClose
            }
        }
        return .head(status: head.status, location: head.location)
    }

    /// The status line and the headers a probe reads, from a head without its empty line.
    private static func head(_ raw: UnsafeRawBufferPointer) throws(Malformed) -> Head {
        var head = Head()
        var lineStart = 0
        var isStatusLine = true
        while lineStart <= raw.count {
            var lineEnd = lineStart
            while lineEnd < raw.count, raw[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            let next = lineEnd + 1
            if lineEnd > lineStart, raw[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            let line = UnsafeRawBufferPointer(rebasing: raw[lineStart..<lineEnd])
            lineStart = next
            if isStatusLine {
                head.status = try status(line)
                isStatusLine = false
                continue
            }
            // A folded line continues the header before it, which nothing here reads.
            if let first = line.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { continue }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { throw Malformed() }
            let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
            let value = trimmed(UnsafeRawBufferPointer(rebasing: line[(colon + 1)...]))
            if equalsIgnoringCase(name, "content-length") {
                let length = try decimal(value)
                guard head.contentLength == nil || head.contentLength == length else { throw Malformed() }
                head.contentLength = length
            } else if equalsIgnoringCase(name, "transfer-encoding") {
                head.hasTransferEncoding = true
                // The last coding decides; a later header's codings come after an earlier one's.
                let lastCoding = value.lastIndex(of: UInt8(ascii: ",")).map { $0 + 1 } ?? 0
                head.chunked = equalsIgnoringCase(
                    trimmed(UnsafeRawBufferPointer(rebasing: value[lastCoding...])),
                    "chunked"
                )
            } else if head.location == nil, equalsIgnoringCase(name, "location") {
                head.location = String(decoding: value, as: UTF8.self)
            }
        }
        return head
    }

    /// The status code of a status line: `HTTP/` digit `.` digit, a space, three digits, then the end or a space.
    private static func status(_ line: UnsafeRawBufferPointer) throws(Malformed) -> Int {
        let prefix = "HTTP/".utf8
        guard line.count >= 12, line.starts(with: prefix) else { throw Malformed() }
        let digit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        guard digit(line[5]), line[6] == UInt8(ascii: "."), digit(line[7]), line[8] == UInt8(ascii: " "),
            digit(line[9]), digit(line[10]), digit(line[11]), line.count == 12 || line[12] == UInt8(ascii: " ")
        else { throw Malformed() }
        return Int(line[9] - 48) * 100 + Int(line[10] - 48) * 10 + Int(line[11] - 48)
    }

    /// A chunk-size line's size: hexadecimal digits, then optional extensions after `;`.
    private static func chunkSize(_ line: ByteBuffer) throws(Malformed) -> Int {
        var size = 0
        var digits = 0
        for byte in line.readableBytesView {
            let value: Int
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = Int(byte - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = Int(byte - UInt8(ascii: "A")) + 10
            case UInt8(ascii: ";"), UInt8(ascii: " "), UInt8(ascii: "\t"):
                guard digits > 0 else { throw Malformed() }
                return size
            default: throw Malformed()
            }
            // Over 2^59 bytes is not a chunk any server sends (leading zeros are no more bytes).
            guard size < 1 << 55 else { throw Malformed() }
            size = size << 4 | value
            digits += 1
        }
        guard digits > 0 else { throw Malformed() }
        return size
    }

    /// A `Content-Length` value: decimal digits only, leading zeros or not.
    private static func decimal(_ value: UnsafeRawBufferPointer) throws(Malformed) -> Int {
        guard !value.isEmpty else { throw Malformed() }
        var number = 0
        for byte in value {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), number <= (Int.max - 9) / 10 else {
                throw Malformed()
            }
            number = number * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return number
    }

    /// `value` without the spaces and tabs around it.
    private static func trimmed(_ value: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let blank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = value.firstIndex(where: { !blank($0) }), let last = value.lastIndex(where: { !blank($0) })
        else { return UnsafeRawBufferPointer(rebasing: value[0..<0]) }
        return UnsafeRawBufferPointer(rebasing: value[first...last])
    }

    /// Whether `bytes` spell `lowercase`, in any case.
    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeRawBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        for index in 0..<bytes.count {
            let byte = bytes[index]
            let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            guard folded == expected[index] else { return false }
        }
        return true
    }
}
