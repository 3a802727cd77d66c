/// What the recorder commits in one transaction: the transitions and finished minutes gathered since
/// the last commit, and the time up to which this run of reachd has recorded.
struct HistoryBatch: Sendable {
    /// One verdict or target state change.
    struct Transition: Sendable, Hashable {
        var at: Double
        /// `""` for the verdict, else the target's name.
        var scope: String
        var state: String
        var reason: String?
        var fault: String?
        var target: String?
    }

    /// One target's finished minute.
    struct Minute: Sendable, Hashable {
        var target: String
        /// Seconds since the epoch, a multiple of 60.
        var start: Int64
        var probes: Int
        var failures: [String: Int]
        var latencyP50: Double?
        var latencyP99: Double?
    }

    var transitions: [Transition] = []
    var minutes: [Minute] = []
    /// This run's recording reaches up to here.
    var seenAt: Double = 0

    var isEmpty: Bool { transitions.isEmpty && minutes.isEmpty }

    var count: Int { transitions.count + minutes.count }

    /// Drops the oldest rows until at most `limit` remain, minutes first: a transition (an outage's
    /// start or end) says more than a minute's counts. Returns how many went.
    mutating func trim(to limit: Int) -> Int {
        let excess = max(0, count - max(0, limit))
        let minutesGone = min(excess, minutes.count)
        minutes.removeFirst(minutesGone)
        transitions.removeFirst(excess - minutesGone)
        return excess
    }
}
