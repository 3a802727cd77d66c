import ReachSupport

/// Reads one HTTP/1.1 answer from the bytes of a connection as they arrive: the status line and
/// headers, then the body as `Content-Length`, chunked transfer coding or the connection's end
/// delimits it. Informational (`1xx`) answers are skipped.
///
/// What reachd's client needs of HTTP and no more: it sends one request per connection and reads
/// one answer.
struct HTTPResponseReader {
    /// A part of the answer, in order.
    enum Part: Equatable {
        case head(status: Int, reason: String)
        case body([UInt8])
        case end
    }

    /// The answer is not HTTP, or not one this reader takes, or the connection ended before it did.
    struct Malformed: Error, CustomStringConvertible {
        let description: String
        var isCutShort = false
    }

    /// The most a status line and its headers may take.
    static let headLimit = 64 << 10

    private enum State {
        case head
        case length(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    private var state = State.head
    private var buffered: [UInt8] = []

    /// Whether the answer has been read to its end.
    var isComplete: Bool {
        if case .done = state { true } else { false }
    }

    /// The parts that `bytes` complete.
    mutating func feed(_ bytes: some Collection<UInt8>) throws(Malformed) -> [Part] {
        buffered.append(contentsOf: bytes)
        var parts: [Part] = []
        var start = 0
        defer { buffered.removeFirst(start) }
        while true {
            switch state {
            case .done:
                return parts
            case .head:
                guard let end = Self.find([13, 10, 13, 10], in: buffered, from: start) else {
                    guard buffered.count - start <= Self.headLimit else {
                        throw Malformed(description: "a head over \(Self.headLimit >> 10) KiB")
                    }
                    return parts
                }
                let head = try Self.head(buffered[start..<end])
                start = end + 4
                if (100..<200).contains(head.status) { continue }
                parts.append(.head(status: head.status, reason: head.reason))
                if head.status == 204 || head.status == 304 {
                    state = .done
                } else if head.chunked {
                    state = .chunkSize
                } else if let length = head.length {
                    state = .length(remaining: length)
                } else {
                    state = .untilClose
                }
                if case .length(0) = state { state = .done }
                if case .done = state { parts.append(.end) }
            case .length(let remaining):
                let take = min(remaining, buffered.count - start)
                guard take > 0 else { return parts }
                parts.append(.body(Array(buffered[start..<start + take])))
                start += take
                state = remaining == take ? .done : .length(remaining: remaining - take)
                if case .done = state { parts.append(.end) }
            case .chunkSize:
                guard let end = Self.find([13, 10], in: buffered, from: start) else {
                    guard buffered.count - start <= 1024 else {
                        throw Malformed(description: "a chunk size line over 1 KiB")
                    }
                    return parts
                }
                let line = String(decoding: buffered[start..<end], as: UTF8.self)
                let digits = line.prefix { $0 != ";" }.trimmingWhitespace
                guard let size = Int(digits, radix: 16), size >= 0 else {
                    throw Malformed(description: "a chunk size that is not a hexadecimal number: \(line.prefix(40))")
                }
                start = end + 2
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                let take = min(remaining, buffered.count - start)
                guard take > 0 else { return parts }
                parts.append(.body(Array(buffered[start..<start + take])))
                start += take
                state = remaining == take ? .chunkDataEnd : .chunkData(remaining: remaining - take)
            case .chunkDataEnd:
                guard buffered.count - start >= 2 else { return parts }
                guard buffered[start] == 13, buffered[start + 1] == 10 else {
                    throw Malformed(description: "a chunk not followed by CRLF")
                }
                start += 2
                state = .chunkSize
            case .trailers:
                guard let end = Self.find([13, 10], in: buffered, from: start) else {
                    guard buffered.count - start <= Self.headLimit else {
                        throw Malformed(description: "trailers over 64 KiB")
                    }
                    return parts
                }
                // An empty line ends the trailers, which are not read.
                let isEmpty = end == start
                start = end + 2
                if isEmpty {
                    state = .done
                    parts.append(.end)
                }
            case .untilClose:
                guard buffered.count > start else { return parts }
                parts.append(.body(Array(buffered[start...])))
                start = buffered.count
                return parts
            }
        }
    }

    /// The connection ended: the last part for an answer delimited by the end, else what was cut short.
    mutating func finish() throws(Malformed) -> [Part] {
        switch state {
        case .done: return []
        case .untilClose:
            state = .done
            return [.end]
        default: throw Malformed(description: "the connection ended before the answer", isCutShort: true)
        }
    }

    private struct Head {
        var status: Int
        var reason: String
        var length: Int?
        var chunked = false
    }

    private static func head(_ bytes: ArraySlice<UInt8>) throws(Malformed) -> Head {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.first ?? ""
        let words = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard words.count >= 2, words[0].hasPrefix("HTTP/1."), words[1].count == 3, let status = Int(words[1]) else {
            throw Malformed(description: "not an HTTP/1.1 status line: \(statusLine.prefix(40))")
        }
        var head = Head(status: status, reason: words.count > 2 ? String(words[2]) : "")
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw Malformed(description: "a header without a colon") }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingWhitespace
            if name == "content-length" {
                guard let length = Int(value), length >= 0 else {
                    throw Malformed(description: "a Content-Length that is not a number: \(value.prefix(40))")
                }
                head.length = length
            } else if name == "transfer-encoding" {
                head.chunked = value.lowercased().hasSuffix("chunked")
            }
        }
        return head
    }

    /// Where `pattern` first starts in `bytes` at or after `start`.
    private static func find(_ pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        var index = start
        while index <= bytes.count - pattern.count {
            if bytes[index] == pattern[0], bytes[index..<index + pattern.count].elementsEqual(pattern) { return index }
            index += 1
        }
        return nil
    }
}
