import ReachSupport

/// Which paths reachd probes besides the system's routes: each uplink on its own
/// (`probe.per_interface`), and each address family of a dual-stack name.
///
/// A variant is probed like any target, on the same scheduler and event loop, so it costs what a
/// target's probe costs. Only HTTP and TCP targets have variants: their connection is reachd's
/// own, and can be bound to a device or held to a family.
public struct ProbeVariantSettings: Sendable, Hashable {
    /// Whether each target is also probed out of each usable uplink, when there are two or more.
    package var perInterface: Bool
    /// Every how many of a target's intervals a name with addresses of both families is probed
    /// over each family on its own; 0 never. Happy Eyeballs hides a broken family (the other one
    /// answers), so the target's own probes cannot tell; probing both families every round would
    /// double the cost of every dual-stack target, every tenth round adds a fifth. A family that
    /// breaks is reported within `familyCheckRounds × interval × failuresBeforeDown + timeout`
    /// and half a second (how close after an immediate probe a tick counts as a repeat).
    package var familyCheckRounds: Int

    /// The default of ``familyCheckRounds``: a broken family is told within 12.5 s at the default
    /// one-second interval, two-second timeout and no damping.
    package static let defaultFamilyCheckRounds = 10

    package init(perInterface: Bool = false, familyCheckRounds: Int = defaultFamilyCheckRounds) {
        self.perInterface = perInterface
        self.familyCheckRounds = familyCheckRounds
    }

    /// The variants of `targets` to probe: each one out of each of `uplinks` (when per-interface
    /// probing is on and there are two or more), and each auto-family name over each of
    /// `families` (when there are two: the host can use both).
    package func probes(for targets: [ProbeTarget], uplinks: [String], families: Set<IPFamily>) -> [ProbeTarget] {
        var probes: [ProbeTarget] = []
        for target in targets where target.variant == nil && target.hasVariants {
            if perInterface, uplinks.count > 1 {
                for uplink in uplinks {
                    probes.append(
                        target.probing(
                            ProbeVariant(target: target.name, kind: .interface(uplink)),
                            as: "\(target.name)@\(uplink)"
                        )
                    )
                }
            }
            if familyCheckRounds > 0, families.count > 1, target.addressFamily == .auto,
                target.endpoint.literalAddress == nil
            {
                for family in families.sorted() {
                    var probe = target.probing(
                        ProbeVariant(target: target.name, kind: .family(family)),
                        as: "\(target.name)%\(family.rawValue)"
                    )
                    probe.addressFamily = family == .ipv4 ? .ipv4 : .ipv6
                    probe.interval = target.interval * familyCheckRounds
                    probes.append(probe)
                }
            }
        }
        return probes
    }
}

extension ProbeTarget {
    /// Whether its paths can be told apart: an HTTP or TCP target beyond this machine.
    fileprivate var hasVariants: Bool {
        switch check {
        case .http, .tcp: !endpoint.isLoopback
        case .grpc, .dns, .icmp: false
        }
    }

    fileprivate func probing(_ variant: ProbeVariant, as name: String) -> ProbeTarget {
        var probe = self
        probe.name = name
        probe.variant = variant
        return probe
    }
}
