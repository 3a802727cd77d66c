import ReachSupport

/// How well a connected target must answer before reachd calls it slow: the `quality:` section,
/// and a target's own `quality:` over it. Quality is a second axis beside the verdict: it never
/// makes a target or the verdict `disconnected` and never runs a restoration callback.
///
/// A measure without a budget is not judged; a target with no budget at all has no quality.
package struct QualityBudget: Sendable, Hashable {
    /// The window's median request time (HTTP, TCP, gRPC) or round trip (ICMP).
    package var latency: Duration?
    /// The window's share of failed probes (or lost echoes), 0–1.
    package var loss: Double?
    /// The window's mean jitter of echo bursts: judged only for targets whose probes measure it (ICMP).
    package var jitter: Duration?
    /// How far back the measures look.
    package var window: Duration

    package init(
        latency: Duration? = nil,
        loss: Double? = nil,
        jitter: Duration? = nil,
        window: Duration = .seconds(30)
    ) {
        self.latency = latency
        self.loss = loss
        self.jitter = jitter
        self.window = window
    }

    /// What reachd ships: budgets a clean line never crosses, even on a loaded machine (a median
    /// of half a second, one probe in ten lost), which a slow or lossy line does. See
    /// docs/quality.md for the measurement behind them.
    package static let shipped = QualityBudget(
        latency: .milliseconds(500),
        loss: 0.1,
        jitter: .milliseconds(100),
        window: .seconds(30)
    )

    /// Whether any measure has a budget.
    package var judgesAnything: Bool { latency != nil || loss != nil || jitter != nil }

    /// The budget of `measure`, in its unit (seconds, or a share 0–1).
    package func limit(_ measure: QualityMeasure) -> Double? {
        switch measure {
        case .latency: latency?.seconds
        case .loss: loss
        case .jitter: jitter?.seconds
        }
    }
}
