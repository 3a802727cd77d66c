/// A day of the proleptic Gregorian calendar, and the count of days since 1970-01-01 it is: the
/// calendar arithmetic of every timestamp reachd writes or reads (RFC 3339, HTTP dates), done once
/// and by hand, so that no formatter, locale or time-zone data is ever loaded for it.
///
/// The conversions are Howard Hinnant's `days_from_civil` and `civil_from_days`, exact for any year.
package struct CivilDate: Sendable, Hashable {
    package var year: Int64
    /// 1 (January) to 12.
    package var month: Int64
    /// 1 to 31.
    package var day: Int64

    package init(year: Int64, month: Int64, day: Int64) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `daysSinceEpoch` days after 1970-01-01 (before it, when negative).
    package init(daysSinceEpoch: Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// The days from 1970-01-01 to this date; negative before it.
    package var daysSinceEpoch: Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// 0 for Sunday to 6 for Saturday (1970-01-01 was a Thursday).
    package var weekday: Int {
        Int((daysSinceEpoch % 7 + 11) % 7)
    }
}

extension Int64 {
    /// The quotient rounded towards minus infinity, and the remainder that goes with it (never negative).
    package func flooredDivision(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}
