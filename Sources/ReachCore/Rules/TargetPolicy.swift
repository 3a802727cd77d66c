/// How the targets' health combines into one answer.
public enum TargetPolicy: Sendable, Hashable, CustomStringConvertible {
    /// Every target must be healthy.
    case all
    /// One healthy target is enough.
    case any
    /// At least this many targets must be healthy.
    case quorum(Int)

    public var description: String {
        switch self {
        case .all: "all"
        case .any: "any"
        case .quorum(let k): "quorum(\(k))"
        }
    }
}

extension TargetPolicy {
    /// The same policy over `count` targets: a quorum beyond them asks for all of them (a
    /// `--targets-file` shorter than the quorum, the targets probed out of one uplink).
    package func capped(at count: Int) -> TargetPolicy {
        if case .quorum(let k) = self, k > count { return .all }
        return self
    }

    /// Where the targets' health counts leave the policy: the one rule behind the verdict and each
    /// uplink's reachability.
    func outcome(_ counts: HealthCounts) -> PolicyOutcome {
        let required =
            switch self {
            case .all: counts.count
            case .any: min(1, counts.count)
            case .quorum(let k): k
            }
        if counts.healthy >= required { return .met }
        if counts.healthy + counts.unknown < required, let firstUnhealthy = counts.unhealthy.min() {
            return .failed(firstUnhealthy)
        }
        return .pending
    }
}

/// What the targets' health says under a ``TargetPolicy``.
enum PolicyOutcome {
    case met
    /// Carries the index of the first unhealthy target.
    case failed(Int)
    case pending
}
