/// HTTP's date (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, the form every server
/// sends): the `Date` header the status API writes, and the `Retry-After` date ReachKit reads.
package enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `secondsSinceEpoch` in IMF-fixdate.
    package static func string(secondsSinceEpoch: Int64) -> String {
        let (days, secondOfDay) = secondsSinceEpoch.flooredDivision(by: 86_400)
        let date = CivilDate(daysSinceEpoch: days)
        func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(weekdays[date.weekday]), \(twoDigits(date.day)) \(months[Int(date.month) - 1]) \(date.year) "
            + "\(twoDigits(secondOfDay / 3600)):\(twoDigits(secondOfDay / 60 % 60)):\(twoDigits(secondOfDay % 60)) GMT"
    }

    /// The time an IMF-fixdate names; `nil` for anything else.
    package static func wallTime(from text: String) -> WallTime? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT", let day = Int64(parts[1]),
            let year = Int64(parts[3]),
            let month = months.firstIndex(of: String(parts[2])).map({ Int64($0) + 1 })
        else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int64($0) }
        guard clock.count == 3, (1...31).contains(day), (0...23).contains(clock[0]), (0...59).contains(clock[1]),
            (0...60).contains(clock[2])
        else {
            return nil
        }
        let days = CivilDate(year: year, month: month, day: day).daysSinceEpoch
        return WallTime(sinceEpoch: .seconds(days * 86_400 + clock[0] * 3_600 + clock[1] * 60 + clock[2]))
    }
}
