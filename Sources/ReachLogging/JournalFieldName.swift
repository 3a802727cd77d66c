/// Turns a swift-log metadata key into a journal field name that journald accepts.
///
/// journald drops a field whose name is not valid *silently* (the send still returns 0), so every
/// name is made valid here rather than trusted: upper-case ASCII letters, digits and `_`, not
/// starting with `_` or a digit, at most 64 bytes. Metadata keys get the `REACHD_` prefix, which
/// keeps them apart from journald's own fields and makes any key start with a letter.
package enum JournalFieldName {
    /// The prefix of every field that carries logger metadata.
    package static let metadataPrefix = "REACHD_"

    /// journald's limit on a field name's length.
    package static let maximumLength = 64

    /// The field name for metadata `key`: `state` → `REACHD_STATE`, `previous_state` →
    /// `REACHD_PREVIOUS_STATE`, `receiveBuffer` → `REACHD_RECEIVE_BUFFER`, `a.b-c` → `REACHD_A_B_C`.
    package static func forMetadataKey(_ key: String) -> String {
        var body = ""
        var previous: Unicode.Scalar?
        for scalar in key.unicodeScalars {
            switch scalar {
            case "a"..."z":
                body.unicodeScalars.append(Unicode.Scalar(scalar.value - 0x20)!)
            case "A"..."Z":
                // camelCase: a word boundary before an upper-case letter that follows a lower-case one or a digit.
                if let previous, ("a"..."z").contains(previous) || ("0"..."9").contains(previous) {
                    appendSeparator(to: &body)
                }
                body.unicodeScalars.append(scalar)
            case "0"..."9":
                body.unicodeScalars.append(scalar)
            default:
                appendSeparator(to: &body)
            }
            previous = scalar
        }
        while body.hasSuffix("_") { body.removeLast() }
        if body.isEmpty { body = "FIELD" }
        return String((metadataPrefix + body).utf8.prefix(maximumLength))!
    }

    /// Whether journald keeps a field of this name (its `journal_field_valid`, without the
    /// protected `_` fields, which only journald itself may set).
    package static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maximumLength else { return false }
        guard first != UInt8(ascii: "_"), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return bytes.allSatisfy {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "_")
        }
    }

    /// One `_` between words, never two in a row and never leading the body.
    private static func appendSeparator(to body: inout String) {
        if !body.isEmpty, !body.hasSuffix("_") { body += "_" }
    }
}
