/// A calendar time: the span since the Unix epoch.
///
/// The core stays free of Foundation; adapters turn this into RFC 3339 text or a `Date`.
public struct WallTime: InstantProtocol {
    public var sinceEpoch: Duration

    public init(sinceEpoch: Duration) {
        self.sinceEpoch = sinceEpoch
    }

    /// Seconds since the epoch, with a fraction: what Prometheus and JSON want.
    public var secondsSinceEpoch: Double {
        let (seconds, attoseconds) = sinceEpoch.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    public static func < (lhs: WallTime, rhs: WallTime) -> Bool { lhs.sinceEpoch < rhs.sinceEpoch }

    public func advanced(by duration: Duration) -> WallTime { WallTime(sinceEpoch: sinceEpoch + duration) }

    public func duration(to other: WallTime) -> Duration { other.sinceEpoch - sinceEpoch }
}
