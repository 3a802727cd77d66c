import ReachSupport

/// HTTP's `Retry-After` (RFC 9110, section 10.2.3): delay-seconds, or an HTTP date (``ReachSupport/HTTPDate``).
enum RetryAfter {
    /// How long the header asks to wait from `now`: zero for a date already past; `nil` when it is neither form.
    static func delay(_ value: String, now: WallTime) -> Duration? {
        let value = value.trimmingWhitespace
        if let seconds = Int(value), seconds >= 0 { return .seconds(seconds) }
        guard let date = HTTPDate.wallTime(from: value) else { return nil }
        return max(.zero, now.duration(to: date))
    }
}
