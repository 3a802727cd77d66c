/// One target's probes in the current minute: counted as results arrive, turned into a
/// ``HistoryBatch/Minute`` (with latency percentiles) once the minute is over.
struct MinuteRollup: Sendable {
    /// Seconds since the epoch, a multiple of 60.
    let start: Int64
    private(set) var latencies: [Double] = []
    private(set) var failures: [String: Int] = [:]

    init(start: Int64) {
        self.start = start
        latencies.reserveCapacity(64)
    }

    /// The minute `seconds` (since the epoch) falls in.
    static func minute(of seconds: Double) -> Int64 {
        Int64((seconds / 60).rounded(.down)) * 60
    }

    mutating func add(latency: Double, failure: String?) {
        latencies.append(latency)
        if let failure { failures[failure, default: 0] += 1 }
    }

    /// The finished minute of `target`: the nearest-rank 50th and 99th percentiles of its latencies.
    func finished(target: String) -> HistoryBatch.Minute {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double? {
            sorted.isEmpty
                ? nil : sorted[min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))]
        }
        return HistoryBatch.Minute(
            target: target,
            start: start,
            probes: latencies.count,
            failures: failures,
            latencyP50: percentile(0.5),
            latencyP99: percentile(0.99)
        )
    }
}
