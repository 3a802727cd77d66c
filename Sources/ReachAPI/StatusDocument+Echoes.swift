import ReachCore
import ReachSupport

extension StatusDocument {
    /// What an `icmp` target's last probe measured: its burst of echoes (``ReachCore/EchoStatistics``).
    package struct Echoes: Codable, Sendable, Hashable {
        /// Echo requests sent, and replies received within the timeout.
        package var sent: Int
        package var received: Int
        /// The replies' round trips; `null` when none came back.
        @Nullable package var rttMinSeconds: Double? = nil
        @Nullable package var rttMedianSeconds: Double? = nil
        @Nullable package var rttMaxSeconds: Double? = nil
        /// The mean difference between successive round trips; `null` below two replies.
        @Nullable package var jitterSeconds: Double? = nil

        enum CodingKeys: String, CodingKey {
            case sent, received
            case rttMinSeconds = "rtt_min_seconds"
            case rttMedianSeconds = "rtt_median_seconds"
            case rttMaxSeconds = "rtt_max_seconds"
            case jitterSeconds = "jitter_seconds"
        }
    }
}

extension StatusDocument.Echoes {
    init(statistics: EchoStatistics) {
        self.init(
            sent: statistics.sent,
            received: statistics.received,
            rttMinSeconds: statistics.minimum?.seconds,
            rttMedianSeconds: statistics.median?.seconds,
            rttMaxSeconds: statistics.maximum?.seconds,
            jitterSeconds: statistics.jitter?.seconds
        )
    }
}
