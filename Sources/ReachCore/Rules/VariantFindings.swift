import ReachSupport

/// What the path probes found (see ``ProbeVariant``): per uplink and per address family, each
/// target's health through its own hysteresis, kept apart from the health that decides the
/// verdict. A result costs O(1), as a target's does: each uplink's health counts are kept as its
/// targets change.
struct VariantFindings: Sendable {
    /// One uplink's targets and their counts by health.
    struct Uplink: Sendable {
        /// By target index; `nil` for a target without paths (gRPC, loopback).
        var statuses: [TargetStatus?]
        var counts: HealthCounts
        /// The first target with paths, whose latency the uplink shows.
        let first: Int?

        init(targets: [ProbeTarget], probed: Set<String>) {
            statuses = targets.map { probed.contains($0.name) ? TargetStatus(name: $0.name, kind: $0.kind) : nil }
            counts = HealthCounts(unknown: probed.count)
            first = statuses.firstIndex { $0 != nil }
        }
    }

    var settings: ProbeVariantSettings
    /// The uplinks probed one by one: the usable interfaces, when per-interface probing is on,
    /// they are two or more and some target can be probed out of each.
    private(set) var uplinks: [String] = []
    private var byUplink: [String: Uplink] = [:]
    /// By target index: each family checked, and the target's health over it.
    private var byFamily: [Int: [IPFamily: TargetStatus]] = [:]
    /// The variants to probe, and a number that moves on whenever they change.
    private(set) var probes: [ProbeTarget] = []
    private(set) var generation: UInt64 = 0

    init(settings: ProbeVariantSettings) {
        self.settings = settings
    }

    /// Plans the variants for `targets` over `uplinks` and `families`, keeping the findings of the
    /// uplinks that stay unless `targetsChanged`; says whether the variants changed.
    mutating func plan(
        targets: [ProbeTarget],
        uplinks usable: [String],
        families: Set<IPFamily>,
        targetsChanged: Bool
    ) -> Bool {
        let planned = settings.probes(for: targets, uplinks: usable, families: families)
        guard planned != probes || targetsChanged else { return false }
        if targetsChanged { (byUplink, byFamily) = ([:], [:]) }
        probes = planned
        generation &+= 1
        let probed = Set(planned.compactMap { $0.interface == nil ? nil : $0.variant?.target })
        uplinks = probed.isEmpty ? [] : usable
        var kept: [String: Uplink] = [:]
        for uplink in uplinks { kept[uplink] = byUplink[uplink] ?? Uplink(targets: targets, probed: probed) }
        byUplink = kept
        return true
    }

    /// Forgets every finding: what the paths said before a link change or a sleep is no evidence now.
    mutating func reset(targets: [ProbeTarget]) {
        let probed = Set(probes.compactMap { $0.interface == nil ? nil : $0.variant?.target })
        for uplink in uplinks { byUplink[uplink] = Uplink(targets: targets, probed: probed) }
        byFamily = [:]
    }

    /// Applies a result out of `interface` and answers the uplink's reachability; `nil` for an
    /// uplink or target not probed (any longer).
    mutating func record(
        _ result: ProbeResult,
        of index: Int,
        interface: String,
        hysteresis: Hysteresis,
        policy: TargetPolicy,
        at now: WallTime
    ) -> InterfaceReachability? {
        guard var uplink = byUplink[interface], index < uplink.statuses.count, var status = uplink.statuses[index]
        else { return nil }
        let before = status.health
        status.record(result, hysteresis: hysteresis, at: now)
        uplink.statuses[index] = status
        uplink.move(index, from: before, to: status.health)
        byUplink[interface] = uplink
        return uplink.reachability(named: interface, policy: policy)
    }

    /// Applies a result over `family` and answers the target's checked, answering and degraded families.
    mutating func record(
        _ result: ProbeResult,
        of index: Int,
        family: IPFamily,
        hysteresis: Hysteresis,
        at now: WallTime
    ) -> (families: [IPFamily], answered: [IPFamily], degraded: [IPFamily]) {
        var checks = byFamily[index] ?? [:]
        var status = checks[family] ?? TargetStatus(name: result.target, kind: "")
        status.record(result, hysteresis: hysteresis, at: now)
        checks[family] = status
        byFamily[index] = checks
        return Self.summary(checks)
    }

    /// A family is checked unless the name has no address of it; it answered when its check is
    /// healthy; it is degraded when its check is unhealthy while another family answered.
    static func summary(
        _ checks: [IPFamily: TargetStatus]
    ) -> (families: [IPFamily], answered: [IPFamily], degraded: [IPFamily]) {
        let offered = checks.filter {
            !($0.value.health == .unhealthy && $0.value.lastFailure?.isNoAddressOfFamily == true)
        }
        let families = offered.keys.sorted()
        let answered = families.filter { offered[$0]?.health == .healthy }
        let degraded = answered.isEmpty ? [] : families.filter { offered[$0]?.health == .unhealthy }
        return (families, answered, degraded)
    }
}

extension VariantFindings.Uplink {
    fileprivate mutating func move(_ index: Int, from old: TargetHealth, to new: TargetHealth) {
        guard old != new else { return }
        counts.move(index, from: old, to: new)
    }

    /// The target policy, over the targets probed out of this uplink: reachable when it holds,
    /// unreachable with the first failing target's reason when it no longer can, else unknown.
    fileprivate func reachability(named name: String, policy: TargetPolicy) -> InterfaceReachability {
        let latency = first.flatMap { statuses[$0]?.lastResult }.flatMap { $0.isSuccess ? $0.latency : nil }
        guard counts.count > 0 else { return InterfaceReachability(name: name, latency: latency) }
        let outcome = policy.capped(at: counts.count).outcome(counts)
        if case .met = outcome { return InterfaceReachability(name: name, reachable: true, latency: latency) }
        if case .failed(let failing) = outcome, let reason = statuses[failing]?.unhealthyReason {
            return InterfaceReachability(
                name: name,
                reachable: false,
                reason: reason,
                fault: Fault(reason),
                latency: latency
            )
        }
        return InterfaceReachability(name: name, latency: latency)
    }
}

extension VariantFindings {
    /// Every probed uplink's reachability, in the order of ``uplinks``.
    func interfaces(policy: TargetPolicy) -> [InterfaceReachability] {
        uplinks.compactMap { name in byUplink[name]?.reachability(named: name, policy: policy) }
    }
}
