/// Splits a `text/event-stream` body into events (the WHATWG algorithm, minus `retry`).
///
/// An event (or a line) over ``eventLimit`` is an error: reachd's are a few KiB, and an endpoint
/// that is not reachd must not grow its client's memory without end.
package struct EventStreamParser: Sendable {
    /// The largest event (or line) accepted, in bytes.
    package static let eventLimit = 1 << 20

    /// An event or line over ``eventLimit``.
    package struct OversizedEvent: Error, CustomStringConvertible {
        package var description: String {
            "an event over \(EventStreamParser.eventLimit / 1024) KiB: not reachd's event stream"
        }
    }

    private var pending: [UInt8] = []
    /// How many bytes at the start of `pending` are known to hold no newline: each byte is searched
    /// once, not once per chunk (a long line arriving in small reads would cost quadratic time).
    private var scanned = 0
    private var current = ServerSentEvent(data: "")
    private var dataLines: [String] = []
    private var dataBytes = 0

    /// A parser at the start of a body.
    package init() {}

    /// Takes the next bytes of the body; returns the events they complete, in order.
    package mutating func feed(_ bytes: some Sequence<UInt8>) throws(OversizedEvent) -> [ServerSentEvent] {
        pending.append(contentsOf: bytes)
        var events: [ServerSentEvent] = []
        var start = pending.startIndex
        var searchFrom = pending.startIndex + scanned
        while let newline = pending[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
            var line = pending[start..<newline]
            start = newline + 1
            searchFrom = start
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            let text = String(decoding: line, as: UTF8.self)
            if text.isEmpty {
                if !dataLines.isEmpty {
                    current.data = dataLines.joined(separator: "\n")
                    events.append(current)
                }
                current = ServerSentEvent(data: "")
                dataLines = []
                dataBytes = 0
                continue
            }
            if text.hasPrefix(":") { continue }
            let field: Substring
            var value: Substring
            if let colon = text.firstIndex(of: ":") {
                field = text[..<colon]
                value = text[text.index(after: colon)...]
                if value.hasPrefix(" ") { value = value.dropFirst() }
            } else {
                field = text[...]
                value = ""
            }
            switch field {
            case "id": current.id = String(value)
            case "event": current.event = String(value)
            case "data":
                dataLines.append(String(value))
                dataBytes += value.utf8.count
            default: break
            }
        }
        pending.removeSubrange(..<start)
        scanned = pending.count
        guard pending.count + dataBytes <= Self.eventLimit else { throw OversizedEvent() }
        return events
    }
}
