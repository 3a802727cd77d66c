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
/// and their mean jitter. Every probe adds a sample and is judged, so the measures are kept as
/// the samples come and go rather than computed from the whole window each time: the loss and
/// the jitter as running sums, the latencies in order (``SortedDurations``), the samples in
/// arrival order from `first` on (those before it have left the window, and are dropped in bulk).
package struct QualityWindow: Sendable {
    package let length: Duration
    private var samples: [QualitySample] = []
    private var first = 0
    private var latencies = SortedDurations()
    private var sent = 0
    private var received = 0
    private var jitterSum = Duration.zero
    private var jitters = 0

    package init(length: Duration) {
        self.length = length
    }

    package var count: Int { samples.count - first }

    /// Adds `sample` and forgets those older than the window before it.
    package mutating func add(_ sample: QualitySample) {
        enter(sample)
        samples.append(sample)
        let horizon = sample.at.sinceEpoch - length
        while first < samples.count, samples[first].at.sinceEpoch <= horizon {
            leave(samples[first])
            first += 1
        }
        // The stale samples go once they are as many as those left: each is moved once on average.
        if first > 0, first >= count {
            samples.removeFirst(first)
            first = 0
        }
    }

    private mutating func enter(_ sample: QualitySample) {
        sent += sample.sent
        received += sample.received
        if let latency = sample.latency { latencies.insert(latency) }
        if let jitter = sample.jitter { (jitterSum, jitters) = (jitterSum + jitter, jitters + 1) }
    }

    private mutating func leave(_ sample: QualitySample) {
        sent -= sample.sent
        received -= sample.received
        if let latency = sample.latency { latencies.remove(latency) }
        if let jitter = sample.jitter { (jitterSum, jitters) = (jitterSum - jitter, jitters - 1) }
    }

    package var measures: QualityMeasures {
        QualityMeasures(
            latency: latencies.median,
            loss: sent > 0 ? Double(sent - received) / Double(sent) : nil,
            jitter: jitters == 0 ? nil : jitterSum / jitters,
            samples: count
        )
    }
}
