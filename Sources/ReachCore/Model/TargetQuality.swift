import ReachSupport

/// The quality of a connection, beside its verdict: it answers well, or it answers badly.
/// Never a third state of the verdict: an impaired connection is still `connected`.
public enum QualityState: String, Sendable, Hashable, CaseIterable {
    /// Every judged measure is within its budget.
    case good
    /// A measure has been past its budget at 3 evaluations (probe results) in a row, and not yet
    /// under 0.7 × it at 5 in a row since.
    case impaired
}

/// What quality judges a target by.
public enum QualityMeasure: String, Sendable, Hashable, CaseIterable {
    /// The window's median request time or round trip.
    case latency
    /// The window's share of failed probes or lost echoes.
    case loss
    /// The window's mean jitter of echo bursts.
    case jitter
}

/// One measure past its budget: what was measured over the window, and what was allowed.
public struct QualityFinding: Sendable, Hashable {
    /// Which measure.
    public var measure: QualityMeasure
    /// Seconds for latency and jitter, a share 0–1 for loss.
    public var value: Double
    /// In the unit of ``value``.
    public var budget: Double

    package init(measure: QualityMeasure, value: Double, budget: Double) {
        self.measure = measure
        self.value = value
        self.budget = budget
    }
}

/// A target's quality: good, or impaired with the measures past their budget.
public struct TargetQuality: Sendable, Hashable {
    /// Good, or impaired: past a budget at 3 evaluations in a row, good again under 0.7 × it at 5.
    public var state: QualityState
    /// The measures that made it impaired, in ``QualityMeasure`` order; empty when good.
    public var exceeded: [QualityFinding]
    /// When ``state`` last changed.
    public var since: WallTime

    package init(state: QualityState, exceeded: [QualityFinding] = [], since: WallTime) {
        self.state = state
        self.exceeded = exceeded
        self.since = since
    }
}

/// What the window shows of a target right now, judged or not: for metrics and the status page's
/// sparkline beside the quality.
package struct QualityMeasures: Sendable, Hashable {
    /// The median latency of the window's answered probes; `nil` when none answered.
    package var latency: Duration?
    /// The window's share of lost probes or echoes; `nil` while the window is empty.
    package var loss: Double?
    /// The mean jitter of the window's echo bursts; `nil` for targets that do not measure it.
    package var jitter: Duration?
    /// How many probes the window holds.
    package var samples: Int

    package init(latency: Duration? = nil, loss: Double? = nil, jitter: Duration? = nil, samples: Int = 0) {
        self.latency = latency
        self.loss = loss
        self.jitter = jitter
        self.samples = samples
    }

    /// `measure`'s value in its unit (seconds, or a share 0–1).
    package func value(_ measure: QualityMeasure) -> Double? {
        switch measure {
        case .latency: latency?.seconds
        case .loss: loss
        case .jitter: jitter?.seconds
        }
    }
}
