extension StringProtocol {
    /// The text without leading and trailing whitespace or newlines.
    ///
    /// `trimmingCharacters(in:)` would do, but it lives in full Foundation (with `CharacterSet`),
    /// which reachd's modules otherwise do without.
    package var trimmingWhitespace: String { trimming { $0.isWhitespace } }

    /// The text without the leading and trailing characters that `isTrimmed` picks.
    package func trimming(while isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
