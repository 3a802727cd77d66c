extension String {
    /// Whether this has a character no HTTP header value may carry (a C0 control other than tab,
    /// or DEL): a token or header value with one is refused where it is read, never sent.
    package var hasHeaderControlCharacter: Bool {
        unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
    }
}
