import ReachSupport

/// One probe as quality sees it: how long it took when it answered, and how much of it was lost.
package struct QualitySample: Sendable, Hashable {
    package var at: WallTime
    /// The request time (or a burst's median round trip); `nil` when nothing answered.
    package var latency: Duration?
    /// Packets (or probes) sent, and answered.
    package var sent: Int
    package var received: Int
    /// A burst's jitter; `nil` for probes that do not measure it.
    package var jitter: Duration?

    package init(at: WallTime, latency: Duration?, sent: Int = 1, received: Int? = nil, jitter: Duration? = nil) {
        self.at = at
        self.latency = latency
        self.sent = sent
        self.received = received ?? (latency == nil ? 0 : 1)
        self.jitter = jitter
    }

    /// A probe's result: one request, answered or lost (a failure is loss whatever its reason: the
    /// request did not get the answer it needed); or an ICMP burst, counted per echo: its median
    /// round trip, its echoes sent and received, its jitter: a burst with one echo back is up, so
    /// counted per probe its loss would read 0 % on a line that loses most echoes.
    package init(_ result: ProbeResult, at now: WallTime) {
        if let echoes = result.echoes {
            self.init(
                at: now,
                latency: echoes.median,
                sent: echoes.sent,
                received: echoes.received,
                jitter: echoes.jitter
            )
        } else {
            self.init(at: now, latency: result.isSuccess ? result.latency : nil)
        }
    }
}

/// A target's samples over the last ``QualityBudget/window``: their median latency, their loss
/// and their mean jitter. The loss is kept as running sums; the median sorts the window's answered
/// samples (a window holds tens of them).
package struct QualityWindow: Sendable, Hashable {
    package let length: Duration
    private var samples: [QualitySample] = []
    private var sent = 0
    private var received = 0

    package init(length: Duration) {
        self.length = length
    }

    package var count: Int { samples.count }

    /// Adds `sample` and forgets those older than the window before it.
    package mutating func add(_ sample: QualitySample) {
        samples.append(sample)
        sent += sample.sent
        received += sample.received
        let horizon = sample.at.sinceEpoch - length
        let stale = samples.prefix { $0.at.sinceEpoch <= horizon }.count
        guard stale > 0 else { return }
        for old in samples.prefix(stale) {
            sent -= old.sent
            received -= old.received
        }
        samples.removeFirst(stale)
    }

    package var measures: QualityMeasures {
        var latencies = samples.compactMap(\.latency)
        latencies.sort()
        let jitters = samples.compactMap(\.jitter)
        return QualityMeasures(
            latency: Self.median(latencies),
            loss: sent > 0 ? Double(sent - received) / Double(sent) : nil,
            jitter: jitters.isEmpty ? nil : jitters.reduce(.zero, +) / jitters.count,
            samples: samples.count
        )
    }

    /// The middle of `sorted` (the mean of the two middle ones for an even count).
    private static func median(_ sorted: [Duration]) -> Duration? {
        guard !sorted.isEmpty else { return nil }
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }
}
