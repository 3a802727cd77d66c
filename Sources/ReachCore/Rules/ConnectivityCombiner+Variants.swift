import ReachSupport

/// The variants half of the combining rules (see ``ProbeVariant``): each uplink's reachability and each
/// family's, from the variants of the targets' probes. None of it changes the verdict's state.
extension ConnectivityCombiner {
    /// The variants of the targets to probe now; ``variantProbesGeneration`` moves on when they change.
    var variantProbes: [ProbeTarget] { variants.probes }
    var variantProbesGeneration: UInt64 { variants.generation }

    /// Takes a variant's result. News when an uplink's reachability or a target's families change;
    /// a new latency alone is not.
    mutating func record(
        _ result: ProbeResult,
        variant: ProbeVariant,
        epoch resultEpoch: ProbeEpoch,
        at now: WallTime
    ) -> Change {
        // A cancelled probe (reachd stopping, or a kernel that refuses SO_BINDTODEVICE) learned nothing.
        guard resultEpoch == epoch, isLinkUsable, !isSleeping, result.failure?.reason != .cancelled,
            let index = indexByName[variant.target]
        else { return Change(accepted: false) }
        let hysteresis = targets[index].hysteresis
        var changed = false
        switch variant.kind {
        case .interface(let name):
            guard
                let reachability = variants.record(
                    result,
                    of: index,
                    interface: name,
                    hysteresis: hysteresis,
                    policy: policy,
                    at: now
                ),
                let position = verdict.interfaces.firstIndex(where: { $0.name == name })
            else { return Change(accepted: false) }
            changed = reachability.differsInMeaning(from: verdict.interfaces[position])
            verdict.interfaces[position] = reachability
        case .family(let family):
            let found = variants.record(result, of: index, family: family, hysteresis: hysteresis, at: now)
            let status = verdict.targets[index]
            changed = (status.families, status.answeredFamilies, status.degradedFamilies) != found
            (
                verdict.targets[index].families, verdict.targets[index].answeredFamilies,
                verdict.targets[index].degradedFamilies
            ) = found
        }
        return settle(control: probeControl, at: now, targetsChanged: changed)
    }

    /// Plans the variants for the current targets, uplinks and families; says whether what the
    /// verdict shows of the paths changed.
    mutating func planPaths(targetsChanged: Bool = false) -> Bool {
        let usable = isLinkUsable ? assessment?.usableInterfaces ?? [] : []
        guard variants.plan(targets: targets, uplinks: usable, families: pathFamilies, targetsChanged: targetsChanged)
        else { return false }
        return showPaths(clearingFamilies: targetsChanged)
    }

    /// Forgets what the paths said (a link change, a wake): it is no evidence now.
    mutating func resetPaths() -> Bool {
        variants.reset(targets: targets)
        return showPaths(clearingFamilies: true)
    }

    private mutating func showPaths(clearingFamilies: Bool) -> Bool {
        var changed = false
        let interfaces = variants.interfaces(policy: policy)
        if interfaces.count != verdict.interfaces.count
            || zip(interfaces, verdict.interfaces).contains(where: { $0.differsInMeaning(from: $1) })
        {
            changed = true
        }
        verdict.interfaces = interfaces
        if clearingFamilies {
            for index in verdict.targets.indices where !verdict.targets[index].families.isEmpty {
                (
                    verdict.targets[index].families, verdict.targets[index].answeredFamilies,
                    verdict.targets[index].degradedFamilies
                ) = ([], [], [])
                changed = true
            }
        }
        return changed
    }

    /// The families the host can reach beyond its link over: a usable interface has a usable
    /// address and a default route of it. None before a link source reports: a family the host
    /// cannot use would read as broken.
    private var pathFamilies: Set<IPFamily> {
        guard isLinkUsable, let links, let usable = assessment?.usableInterfaces else { return [] }
        var families: Set<IPFamily> = []
        for interface in links.interfaces where usable.contains(interface.name) {
            families.formUnion(interface.usableAddressFamilies.intersection(interface.defaultRouteFamilies))
        }
        return families
    }
}
