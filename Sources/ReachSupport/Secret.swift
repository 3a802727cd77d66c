/// A value that must never reach a log line, a metric or a status document, such as a bearer token.
///
/// Its description is `<redacted>`, so string interpolation cannot leak it by accident; the one
/// place that needs the value reads ``revealed``.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    package let revealed: String

    package init(_ value: String) {
        self.revealed = value
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }

    /// Whether an `Authorization` value is `Bearer <this secret>` (the scheme in any case).
    ///
    /// The comparison takes the same time whatever the first differing byte, so response timing
    /// does not leak how much of a guess was right.
    package func isBearerCredential(_ authorization: String) -> Bool {
        let bytes = Array(authorization.utf8)
        let scheme = Array("bearer ".utf8)
        guard bytes.count > scheme.count else { return false }
        for index in scheme.indices {
            let expected = scheme[index]
            let isUpperCaseOfExpected = expected >= UInt8(ascii: "a") && bytes[index] == expected - 0x20
            guard bytes[index] == expected || isUpperCaseOfExpected else { return false }
        }
        return matches(bytes[scheme.count...])
    }

    /// Whether `presented` is this secret, byte for byte; the comparison takes the same time
    /// whatever the first differing byte.
    package func matches(_ presented: some Collection<UInt8>) -> Bool {
        let expected = Array(revealed.utf8)
        var difference = UInt8(truncatingIfNeeded: presented.count ^ expected.count)
        if presented.count != expected.count { difference |= 1 }
        for (offset, byte) in presented.enumerated() {
            difference |= byte ^ (expected.isEmpty ? 0 : expected[offset % expected.count])
        }
        return difference == 0
    }
}
