/// Reads and writes durations the way Go, Prometheus and systemd users write them: `250ms`, `1s`,
/// `1.5s`, `1m30s`, `14d`. A unit is required; a bare number is ambiguous. The one duration parser: the
/// configuration's, and reachctl's under its own rules.
package enum DurationText {
    private static let units: [(suffix: String, nanoseconds: Double)] = [
        ("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9), ("d", 86400e9),
    ]

    package static func parse(_ text: String) -> Duration? {
        var rest = Substring(text)
        guard !rest.isEmpty else { return nil }
        var total = 0.0
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { !($0.isASCII && ($0.isNumber || $0 == ".")) }
            guard let scale = units.first(where: { $0.suffix == unit })?.nanoseconds else { return nil }
            rest = rest.dropFirst(unit.count)
            total += value * scale
        }
        guard total.isFinite, total < 1e18 else { return nil }
        return .nanoseconds(Int64(total.rounded()))
    }

    /// The shortest exact rendering in one unit: `2s`, `250ms`, `1500us`.
    package static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        for (suffix, scale) in [
            ("h", Int64(3600e9)), ("m", Int64(60e9)), ("s", Int64(1e9)), ("ms", Int64(1e6)), ("us", Int64(1e3)),
        ]
        where nanoseconds != 0 && nanoseconds % scale == 0 {
            return "\(nanoseconds / scale)\(suffix)"
        }
        return "\(nanoseconds)ns"
    }
}
