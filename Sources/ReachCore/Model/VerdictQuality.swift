import ReachSupport

/// The quality of a `connected` verdict: `impaired` when a target the policy counts (a healthy
/// one) is impaired, `good` when all of them with a budget are good. It says where the slowness
/// is: a default gateway's own impaired target means the first hop (`link` on a radio, Wi-Fi or
/// mobile, `gateway` otherwise); else the first impaired target's own place (`server`, or `dns`
/// for a `dns` target, whose server is the resolver).
public struct VerdictQuality: Sendable, Hashable {
    /// Good, or impaired.
    public var state: QualityState
    /// Where it is slow; `nil` when good.
    public var fault: Fault?
    /// The impaired target that says it (the gateway's, else the first in configuration order); `nil` when good.
    public var target: String?
    /// That target's measures past their budget.
    public var exceeded: [QualityFinding]
    /// When ``state`` or ``fault`` last changed.
    public var since: WallTime

    package init(
        state: QualityState,
        fault: Fault? = nil,
        target: String? = nil,
        exceeded: [QualityFinding] = [],
        since: WallTime
    ) {
        self.state = state
        self.fault = fault
        self.target = target
        self.exceeded = exceeded
        self.since = since
    }

    /// Whether `other` says something else: another state, place, target or set of measures. A
    /// new measured value alone is not news (it changes with every probe).
    package func differsInMeaning(from other: VerdictQuality?) -> Bool {
        guard let other else { return true }
        return state != other.state || fault != other.fault || target != other.target
            || exceeded.map(\.measure) != other.exceeded.map(\.measure)
    }
}
