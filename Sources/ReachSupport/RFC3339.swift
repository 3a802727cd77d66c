/// RFC 3339 text in UTC with milliseconds (`2027-01-15T08:00:00.123Z`): the one timestamp format of
/// the status API, its writer and its reader.
///
/// Written out by hand rather than with a date formatter so that the output never depends on the
/// locale, time zone or Foundation version of the machine reachd runs on, and so that stamping a
/// log line or reading an event never loads ICU's time-zone data.
package enum RFC3339 {
    /// `time` as reachd writes it: UTC, milliseconds (rounded down), `Z`.
    package static func string(from time: WallTime) -> String {
        let (seconds, attoseconds) = time.sinceEpoch.components
        // Whole milliseconds since the epoch, rounded down (also before 1970).
        var milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if attoseconds < 0, attoseconds % 1_000_000_000_000_000 != 0 { milliseconds -= 1 }
        let (days, millisecondOfDay) = milliseconds.flooredDivision(by: 86_400_000)
        let date = CivilDate(daysSinceEpoch: days)
        let hour = millisecondOfDay / 3_600_000
        let minute = millisecondOfDay / 60_000 % 60
        let second = millisecondOfDay / 1000 % 60
        let millisecond = millisecondOfDay % 1000
        return
            "\(pad(date.year, 4))-\(pad(date.month, 2))-\(pad(date.day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))Z"
    }

    /// The time `text` names: `YYYY-MM-DDTHH:MM:SS`, an optional fraction, then `Z` or a numeric
    /// offset (`+02:00`); `nil` for anything else.
    package static func wallTime(from text: String) -> WallTime? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count, !range.isEmpty else { return nil }
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func separator(_ index: Int, _ allowed: String) -> Bool {
            index < bytes.count && allowed.utf8.contains(bytes[index])
        }
        guard let year = number(0..<4), separator(4, "-"), let month = number(5..<7), separator(7, "-"),
            let day = number(8..<10),
            separator(10, "Tt "), let hour = number(11..<13), separator(13, ":"), let minute = number(14..<16),
            separator(16, ":"),
            let second = number(17..<19), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        var index = 19
        var nanoseconds: Int64 = 0
        if separator(index, ".") {
            let digits = bytes[(index + 1)...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
            guard digits > 0 else { return nil }
            for (position, byte) in bytes[(index + 1)..<(index + 1 + min(digits, 9))].enumerated() {
                nanoseconds += Int64(byte - UInt8(ascii: "0")) * pow10(8 - position)
            }
            index += 1 + digits
        }
        var offsetSeconds: Int64 = 0
        if separator(index, "Zz"), index + 1 == bytes.count {
            offsetSeconds = 0
        } else if separator(index, "+-"), index + 6 == bytes.count, let hours = number((index + 1)..<(index + 3)),
            separator(index + 3, ":"),
            let minutes = number((index + 4)..<(index + 6))
        {
            offsetSeconds = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        } else {
            return nil
        }
        let seconds =
            CivilDate(year: year, month: month, day: day).daysSinceEpoch * 86_400 + hour * 3600 + minute * 60 + second
            - offsetSeconds
        // Only the years that ``string(from:)`` writes (0000–9999 in UTC): a leap second or an
        // offset can carry a time past them, and it would be written in a form this reader refuses.
        guard writableSeconds.contains(seconds) else { return nil }
        return WallTime(sinceEpoch: .seconds(seconds) + .nanoseconds(nanoseconds))
    }

    /// Whether ``string(from:)`` writes `time` in a form ``wallTime(from:)`` reads: a time in the
    /// years 0000–9999, UTC. A window computed from a time and a duration can fall outside them.
    package static func canWrite(_ time: WallTime) -> Bool {
        time.sinceEpoch >= .seconds(writableSeconds.lowerBound)
            && time.sinceEpoch < .seconds(writableSeconds.upperBound)
    }

    /// The seconds since the epoch from 0000-01-01T00:00:00Z to the end of 9999 in UTC.
    private static let writableSeconds: Range<Int64> = {
        let (first, end) = (CivilDate(year: 0, month: 1, day: 1), CivilDate(year: 10_000, month: 1, day: 1))
        return (first.daysSinceEpoch * 86_400)..<(end.daysSinceEpoch * 86_400)
    }()

    private static func pow10(_ exponent: Int) -> Int64 {
        (0..<exponent).reduce(1) { result, _ in result * 10 }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
