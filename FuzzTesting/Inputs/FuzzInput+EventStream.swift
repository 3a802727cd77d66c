import ReachAPI

extension FuzzInput {
    /// A `/v1/events` body as reachctl and ReachKit read it: `EventStreamParser` (the SSE framing
    /// `ReachdClient.follow` runs), then each verdict event's status document
    /// (`StatusDocument(event:)`, as `ReachdClient.follow` reads it).
    ///
    /// The first byte says how to cut the rest into chunks, as TCP might: the events (or the
    /// oversize error) must not depend on where the chunks end. A document an event carried must
    /// survive reachd's own framing (`eventFrame`) and reading back unchanged.
    package static func eventStream(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let body = Array(bytes.dropFirst())
        let whole = sseEvents(body, chunk: body.count)
        let chunked = sseEvents(body, chunk: Int(first % 64) + 1)
        require(
            whole == chunked,
            "the events depend on where the chunks end: \(String(describing: whole)) vs \(String(describing: chunked))"
        )
        for event in whole ?? [] where event.isVerdict {
            guard let document = try? StatusDocument(event: event) else { continue }
            documentRoundTrips(document)
            let framed = sseEvents(Array(document.eventFrame), chunk: Int.max)
            require(framed?.count == 1, "reachd's own frame of a document is not one event")
            require(
                (try? framed.flatMap { try $0.first.map(StatusDocument.init(event:)) }) == document,
                "a framed document read back differently"
            )
        }
    }

    /// The events `body` holds fed in chunks of `chunk` bytes, or `nil` when the parser refused it.
    static func sseEvents(_ body: [UInt8], chunk: Int) -> [ServerSentEvent]? {
        var parser = EventStreamParser()
        var events: [ServerSentEvent] = []
        var start = 0
        repeat {
            let end = start + min(max(chunk, 1), body.count - start)
            guard let some = try? parser.feed(body[start..<end]) else { return nil }
            events += some
            start = end
        } while start < body.count
        return events
    }
}
