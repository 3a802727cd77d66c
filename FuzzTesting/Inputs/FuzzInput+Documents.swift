import ReachAPI

extension FuzzInput {
    /// The status API's JSON documents as clients decode them (`APIJSON.decode`): the status
    /// document (`/v1/status`, `/v1/check`, every event), the history document (`/v1/history`),
    /// the liveness and the error documents. The same bytes are read as each.
    ///
    /// A document that decodes must encode (`APIJSON.encode`) and decode again to the same thing.
    package static func documents(_ bytes: [UInt8]) {
        if let document = try? APIJSON.decode(StatusDocument.self, from: bytes) { documentRoundTrips(document) }
        if let document = try? APIJSON.decode(HistoryDocument.self, from: bytes) { documentRoundTrips(document) }
        if let document = try? APIJSON.decode(LivenessDocument.self, from: bytes) { documentRoundTrips(document) }
        if let document = try? APIJSON.decode(APIErrorDocument.self, from: bytes) { documentRoundTrips(document) }
    }

    /// `document` encoded as reachd writes it decodes to the same document.
    static func documentRoundTrips<Document: Codable & Hashable>(_ document: Document) {
        let encoded = APIJSON.encode(document)
        do {
            let again = try APIJSON.decode(Document.self, from: encoded)
            require(again == document, "\(Document.self) encoded as \(text(encoded)) decodes to something else")
        } catch {
            preconditionFailure(
                "fuzz invariant broken: \(Document.self) encoded as \(text(encoded)) does not decode: \(error)"
            )
        }
    }
}
