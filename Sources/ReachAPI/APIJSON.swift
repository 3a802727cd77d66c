import FoundationEssentials

/// The status API's JSON: one encoder configuration for every document, so that the same document
/// always has the same bytes, and one decoder for every reader.
package enum APIJSON {
    /// Keys sorted, so that the same document always has the same bytes; one line, so that a
    /// document fits an SSE `data:` field; slashes as they are.
    package static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            // Our documents hold strings, numbers, booleans and arrays of them: encoding cannot fail.
            preconditionFailure("encoding \(type(of: value)) failed: \(error)")
        }
    }

    /// Reads a document of type `type` from `bytes`.
    ///
    /// - Throws: `DecodingError` when the bytes are not such a document.
    package static func decode<Document: Decodable>(
        _ type: Document.Type,
        from bytes: some Sequence<UInt8>
    ) throws -> Document {
        try JSONDecoder().decode(type, from: Data(bytes))
    }
}

/// `GET /healthz`'s answer: reachd itself works, whatever the connectivity.
package struct LivenessDocument: Codable, Sendable, Hashable {
    /// `ok`.
    package var status: String

    /// reachd answers.
    package static let ok = LivenessDocument(status: "ok")
}

/// The body of every error answer (`400`, `401`, `404`, `405`, `413`, `421`, `503`): what went wrong, in words.
package struct APIErrorDocument: Codable, Sendable, Hashable {
    /// What went wrong, for the person who sent the request.
    package var error: String

    /// An error saying `error`.
    package init(error: String) {
        self.error = error
    }
}
