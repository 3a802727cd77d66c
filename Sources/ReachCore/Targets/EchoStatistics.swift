/// What one burst of ICMP echoes found (an `icmp` probe): how many went out, how many came back
/// within the deadline, and how long each took. The measures a quality judgement reads (loss,
/// round-trip time, jitter) come from here, per probe, in SmokePing's and fping's terms.
package struct EchoStatistics: Sendable, Hashable {
    /// Echo requests sent.
    package var sent: Int
    /// The round trips of the echoes answered within the deadline, in the order they were sent
    /// (kernel receive time minus send time).
    package var roundTrips: [Duration]

    package init(sent: Int, roundTrips: [Duration]) {
        self.sent = sent
        self.roundTrips = roundTrips
    }

    /// Echo replies received within the deadline.
    package var received: Int { roundTrips.count }

    /// The share of echoes lost, 0–1; 0 when none was sent.
    package var loss: Double { sent > 0 ? Double(sent - received) / Double(sent) : 0 }

    package var minimum: Duration? { roundTrips.min() }
    package var maximum: Duration? { roundTrips.max() }

    /// The middle round trip (the mean of the two middle ones for an even count).
    package var median: Duration? {
        let sorted = roundTrips.sorted()
        guard !sorted.isEmpty else { return nil }
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }

    /// The mean of the differences between successive round trips (absolute, in send order), as
    /// fping's and RFC 3550's jitter measure how unsteady the path is; `nil` below two replies.
    package var jitter: Duration? {
        guard roundTrips.count > 1 else { return nil }
        let steps = zip(roundTrips, roundTrips.dropFirst()).map { $0 > $1 ? $0 - $1 : $1 - $0 }
        return steps.reduce(.zero, +) / steps.count
    }
}
