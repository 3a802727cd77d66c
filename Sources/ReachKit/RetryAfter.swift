import ReachSupport

/// HTTP's `Retry-After` (RFC 9110, section 10.2.3): delay-seconds, or an HTTP date (IMF-fixdate,
/// `Sun, 06 Nov 1994 08:49:37 GMT`, the form every server sends).
enum RetryAfter {
    /// How long the header asks to wait from `now`: zero for a date already past; `nil` when it is neither form.
    static func delay(_ value: String, now: WallTime) -> Duration? {
        let value = value.trimmingWhitespace
        if let seconds = Int(value), seconds >= 0 { return .seconds(seconds) }
        guard let date = date(value) else { return nil }
        return max(.zero, now.duration(to: date))
    }

    /// An IMF-fixdate; `nil` for anything else.
    static func date(_ value: String) -> WallTime? {
        let parts = value.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT", let day = Int(parts[1]),
            let year = Int(parts[3]),
            let month = months.firstIndex(of: String(parts[2])).map({ $0 + 1 })
        else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (1...31).contains(day), (0...23).contains(clock[0]), (0...59).contains(clock[1]),
            (0...60).contains(clock[2])
        else {
            return nil
        }
        let seconds =
            daysFromCivil(year: year, month: month, day: day) * 86_400 + clock[0] * 3_600 + clock[1] * 60 + clock[2]
        return WallTime(sinceEpoch: .seconds(seconds))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
