import FoundationEssentials

/// One Server-Sent Event, as the event stream carries it (the WHATWG `text/event-stream` format).
package struct ServerSentEvent: Sendable, Hashable {
    /// The `id` field: where a client resumes (`Last-Event-ID`).
    package var id: String?
    /// The `event` field: reachd's are ``verdictType``.
    package var event: String?
    /// The `data` lines, joined with newlines.
    package var data: String

    /// An event from its fields.
    package init(id: String? = nil, event: String? = nil, data: String) {
        self.id = id
        self.event = event
        self.data = data
    }

    /// The type of reachd's events: each one's data is a ``StatusDocument``.
    package static let verdictType = "verdict"

    /// Whether this event carries a verdict: typed `verdict`, or untyped (the format's default, `message`).
    package var isVerdict: Bool { event == nil || event == Self.verdictType }

    /// The comment reachd sends on an idle stream, so that proxies keep it open and a client can tell a
    /// dead connection from a quiet one.
    package static let heartbeat = ": heartbeat\n\n"

    /// The event as the stream carries it: its fields, one `data:` line per line of data, and the
    /// blank line that ends it.
    package var encoded: String {
        var text = ""
        if let id { text += "id: \(id)\n" }
        if let event { text += "event: \(event)\n" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        return text + "\n"
    }
}

extension StatusDocument {
    /// The event that carries this document on the event stream: `id` its sequence, `event: verdict`,
    /// and the document's JSON on one `data:` line. The JSON has no newline, so its bytes go out as they are.
    package var eventFrame: Data {
        var frame = Data("id: \(sequence)\nevent: \(ServerSentEvent.verdictType)\ndata: ".utf8)
        frame.append(APIJSON.encode(self))
        frame.append(contentsOf: [UInt8(ascii: "\n"), UInt8(ascii: "\n")])
        return frame
    }

    /// Reads the document an event carries.
    ///
    /// - Throws: `DecodingError` when its data is not a status document.
    package init(event: ServerSentEvent) throws {
        self = try APIJSON.decode(StatusDocument.self, from: event.data.utf8)
    }
}
