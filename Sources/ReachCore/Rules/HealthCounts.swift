/// The targets by health, each counted once: how many are healthy, how many not yet known, and
/// which are unhealthy (by index, so that the policy names the first failing one). Kept as results
/// arrive, for the verdict's targets and for each uplink's, so that a result costs O(1) and the
/// policy is decided from the counts alone.
struct HealthCounts: Sendable, Hashable {
    private(set) var healthy = 0
    private(set) var unknown: Int
    private(set) var unhealthy: Set<Int> = []

    /// `unknown` targets, none of them found yet.
    init(unknown: Int) {
        self.unknown = unknown
    }

    /// The targets of `healths`, by index.
    init(_ healths: [TargetHealth]) {
        self.init(unknown: 0)
        for (index, health) in healths.enumerated() { add(index, health) }
    }

    /// How many targets are counted.
    var count: Int { healthy + unknown + unhealthy.count }

    /// Moves target `index` from one health to another.
    mutating func move(_ index: Int, from old: TargetHealth, to new: TargetHealth) {
        switch old {
        case .healthy: healthy -= 1
        case .unknown: unknown -= 1
        case .unhealthy: unhealthy.remove(index)
        }
        add(index, new)
    }

    private mutating func add(_ index: Int, _ health: TargetHealth) {
        switch health {
        case .healthy: healthy += 1
        case .unknown: unknown += 1
        case .unhealthy: unhealthy.insert(index)
        }
    }
}
