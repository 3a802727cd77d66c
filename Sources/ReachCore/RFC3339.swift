/// Renders a ``ReachCore/WallTime`` as RFC 3339 text in UTC with milliseconds
/// (`2027-01-15T08:00:00.123Z`): the one timestamp format of the status API.
///
/// Written out by hand rather than with a date formatter so that the output never depends on the
/// locale, time zone or Foundation version of the machine reachd runs on, and so that stamping a
/// log line never loads ICU's time-zone data.
package enum RFC3339 {
    package static func string(from time: WallTime) -> String {
        let (seconds, attoseconds) = time.sinceEpoch.components
        // Whole milliseconds since the epoch, rounded down (also before 1970).
        var milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if attoseconds < 0, attoseconds % 1_000_000_000_000_000 != 0 { milliseconds -= 1 }
        let (days, millisecondOfDay) = floorDivision(milliseconds, 86_400_000)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let hour = millisecondOfDay / 3_600_000
        let minute = millisecondOfDay / 60_000 % 60
        let second = millisecondOfDay / 1000 % 60
        let millisecond = millisecondOfDay % 1000
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))Z"
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        var quotient = value / divisor
        var remainder = value % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }

    /// Howard Hinnant's `civil_from_days`: proleptic Gregorian year, month, day of a day count.
    private static func civilDate(daysSinceEpoch: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
