/// The YAML 1.1 tag of a plain (unquoted, untagged) scalar, decided as Yams' default resolver
/// decides it (`bool`, `int`, `float`, then `null`; anything else is a string), without its
/// regular expressions. Timestamps, merge keys and `=` stay strings: no setting takes them.
///
/// Yams matches every plain scalar against `NSRegularExpression`s, which bring ICU's regex engine
/// and Unicode tables into a daemon that otherwise never runs them. The rules are small enough to
/// spell out; `ImplicitTagTests` holds them to Yams' own resolver.
enum ImplicitTag {
    static func of(_ text: String) -> YAMLTag {
        if booleans.contains(text) { return .bool }
        let bytes = Array(text.utf8)
        if isInteger(bytes[...]) { return .int }
        if isFloat(bytes[...]) { return .float }
        if nulls.contains(text) { return .null }
        return .str
    }

    private static let booleans: Set<String> = [
        "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON",
        "off", "Off", "OFF",
    ]
    private static let nulls: Set<String> = ["~", "null", "Null", "NULL", ""]

    private typealias Bytes = ArraySlice<UInt8>

    /// `[-+]?0b[0-1_]+ | [-+]?0o?[0-7_]+ | [-+]?(0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+ | [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+`
    private static func isInteger(_ text: Bytes) -> Bool {
        let digits = droppingSign(text)
        if let rest = dropping("0b", from: digits) {
            return !rest.isEmpty && rest.allSatisfy { $0 == 0x30 || $0 == 0x31 || $0 == underscore }
        }
        if let rest = dropping("0x", from: digits) {
            return !rest.isEmpty && rest.allSatisfy { isHexDigit($0) || $0 == underscore }
        }
        if digits.first == 0x30 {
            var rest = digits.dropFirst()
            if rest.first == UInt8(ascii: "o") { rest = rest.dropFirst() }
            return digits.count == 1
                || (!rest.isEmpty && rest.allSatisfy { (0x30...0x37).contains($0) || $0 == underscore })
        }
        guard let first = digits.first, (0x31...0x39).contains(first) else { return false }
        return digits.allSatisfy(isDigitOrUnderscore) || isBase60(digits)
    }

    /// `[-+]?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)? | \.[0-9_]+([eE][-+][0-9]+)? |
    /// [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)`
    private static func isFloat(_ text: Bytes) -> Bool {
        let unsigned = droppingSign(text)
        if let name = dropping(".", from: unsigned),
            ["inf", "Inf", "INF"].contains(String(decoding: name, as: UTF8.self))
        {
            return true
        }
        if let name = dropping(".", from: text), ["nan", "NaN", "NAN"].contains(String(decoding: name, as: UTF8.self)) {
            return true
        }
        if let fraction = dropping(".", from: text) {
            let (digits, exponent) = splitExponent(fraction)
            return digits.first.map(isDigitOrUnderscore) == true && digits.allSatisfy(isDigitOrUnderscore)
                && exponent.map { isExponent($0, signRequired: true) } ?? true
        }
        guard let first = unsigned.first, isDigit(first) else { return false }
        if unsigned.contains(colon) {
            let halves = unsigned.split(separator: dot, maxSplits: 1, omittingEmptySubsequences: false)
            return halves.count == 2 && isBase60(halves[0]) && halves[1].allSatisfy(isDigitOrUnderscore)
        }
        let (mantissa, exponent) = splitExponent(unsigned)
        let halves = mantissa.split(separator: dot, maxSplits: 1, omittingEmptySubsequences: false)
        return halves[0].allSatisfy(isDigitOrUnderscore)
            && (halves.count == 1 || halves[1].allSatisfy(isDigitOrUnderscore))
            && exponent.map { isExponent($0, signRequired: false) } ?? true
    }

    private static let underscore = UInt8(ascii: "_")
    private static let colon = UInt8(ascii: ":")
    private static let dot = UInt8(ascii: ".")

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
    private static func isDigitOrUnderscore(_ byte: UInt8) -> Bool { isDigit(byte) || byte == underscore }
    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    /// `[0-9][0-9_]*(:[0-5]?[0-9])+`, the whole part of a base-60 number (`190:20:30`); callers
    /// have checked the first digit's range.
    private static func isBase60(_ text: Bytes) -> Bool {
        let parts = text.split(separator: colon, omittingEmptySubsequences: false)
        return parts.count > 1 && parts[0].allSatisfy(isDigitOrUnderscore)
            && parts.dropFirst().allSatisfy(isSexagesimalDigits)
    }

    /// `[0-5]?[0-9]`: one group of a base-60 number.
    private static func isSexagesimalDigits(_ part: Bytes) -> Bool {
        switch part.count {
        case 1: isDigit(part[part.startIndex])
        case 2: (0x30...0x35).contains(part[part.startIndex]) && isDigit(part[part.startIndex + 1])
        default: false
        }
    }

    private static func droppingSign(_ text: Bytes) -> Bytes {
        text.first == UInt8(ascii: "-") || text.first == UInt8(ascii: "+") ? text.dropFirst() : text
    }

    private static func dropping(_ prefix: String, from text: Bytes) -> Bytes? {
        text.starts(with: prefix.utf8) ? text.dropFirst(prefix.utf8.count) : nil
    }

    /// The text before the first `e` or `E`, and what follows it, if there is one.
    private static func splitExponent(_ text: Bytes) -> (Bytes, Bytes?) {
        guard let index = text.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else {
            return (text, nil)
        }
        return (text[..<index], text[(index + 1)...])
    }

    /// `[-+]?[0-9]+` after the `e`, or `[-+][0-9]+` when the sign is required.
    private static func isExponent(_ text: Bytes, signRequired: Bool) -> Bool {
        let digits = droppingSign(text)
        guard !signRequired || digits.count < text.count else { return false }
        return !digits.isEmpty && digits.allSatisfy(isDigit)
    }
}
