import ReachSupport

extension ServerCertificate {
    /// When the chain expires, seen from `now`, in words a person reads at a glance: `in 3 days`,
    /// `in 5 hours`, `2 days ago`. Rounded to the nearest whole unit.
    package func expiry(relativeTo now: WallTime) -> String {
        let seconds = (notAfter.sinceEpoch - now.sinceEpoch).components.seconds
        let span = Self.span(Int(seconds.magnitude))
        return seconds > 0 ? "in \(span)" : "\(span) ago"
    }

    private static func span(_ seconds: Int) -> String {
        let (count, unit) =
            if seconds >= 86_400 { ((seconds + 43_200) / 86_400, "day") } else if seconds >= 3600 {
                ((seconds + 1800) / 3600, "hour")
            } else { ((seconds + 30) / 60, "minute") }
        return count == 1 ? "1 \(unit)" : "\(count) \(unit)s"
    }
}
