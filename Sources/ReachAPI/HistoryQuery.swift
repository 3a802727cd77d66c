import ReachCore
import ReachSupport

/// What `GET /v1/history` asks for: a window and, optionally, one target. The server reads it from
/// the query string, the client writes it there: one definition of the parameters for both.
package struct HistoryQuery: Sendable, Hashable {
    /// The window's start when `since` is not given: a day before its end.
    package static let defaultSpan: Duration = .seconds(86_400)

    /// The window asked for.
    package var window: Range<WallTime>
    /// The target asked about; `nil` for the unified verdict.
    package var target: String?

    package init(window: Range<WallTime>, target: String? = nil) {
        self.window = window
        self.target = target
    }

    /// Reads the query parameters: `since` (RFC 3339, or a duration before `until` such as `24h`,
    /// `7d`, `90m`; a day by default), `until` (RFC 3339; `now` by default) and `target`.
    ///
    /// - Throws: ``Problem`` naming the parameter and what it must be, for a `400` answer.
    package init(since: String?, until: String?, target: String?, now: WallTime) throws(Problem) {
        var end = now
        if let until {
            guard let time = RFC3339.wallTime(from: until) else {
                throw Problem("until must be an RFC 3339 time such as 2027-01-15T08:00:00Z, not \"\(until)\"")
            }
            end = time
        }
        var start = end.advanced(by: .zero - Self.defaultSpan)
        if let since {
            if let time = RFC3339.wallTime(from: since) {
                start = time
            } else if let span = DurationText.parse(since), span > .zero {
                start = end.advanced(by: .zero - span)
            } else {
                throw Problem("since must be an RFC 3339 time or a duration such as 24h or 7d, not \"\(since)\"")
            }
        }
        guard start < end else { throw Problem("since must be before until") }
        // The window is written back in the history document, in RFC 3339's four-digit years.
        guard RFC3339.canWrite(start) else { throw Problem("since must not reach before the year 0000") }
        if let target, target.isEmpty { throw Problem("target must name a target") }
        self.init(window: start..<end, target: target)
    }

    /// The query string for a client: `since=<duration>` when `since` was given as one, so that the
    /// server's clock sets the window; otherwise the window's times.
    package static func queryString(since: String?, until: String? = nil, target: String? = nil) -> String {
        let pairs = [("since", since), ("until", until), ("target", target)].compactMap { name, value in
            value.map { "\(name)=\(percentEncoded($0))" }
        }
        return pairs.joined(separator: "&")
    }

    /// Everything but unreserved characters percent-encoded (RFC 3986), so that `+` in an offset survives.
    private static func percentEncoded(_ text: String) -> String {
        text.percentEncoded { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "-._~".utf8.contains(byte)
        }
    }

    /// A parameter that is not what it must be, in words for the `400` answer's `error`.
    package struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        package var description: String

        package init(_ description: String) {
            self.description = description
        }
    }
}
