import ReachSupport

/// The one path a variant of a target's probe is held to: out of one uplink only, or over one
/// address family only.
///
/// The target's own probes follow the system's routes and decide the verdict. Its variants
/// (``ProbeVariantSettings/probes(for:uplinks:families:)``) run on the same scheduler, at the same cost
/// as a target's probe, and only tell which paths work: each uplink's reachability
/// (``InterfaceReachability``) and each family's (``TargetStatus/degradedFamilies``).
package struct ProbeVariant: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        /// Out of this interface only (`SO_BINDTODEVICE`), whatever the routes prefer.
        case interface(String)
        /// Over this family only, the name's addresses of the other family left out.
        case family(IPFamily)
    }

    /// The configured target this probe is a variant of.
    package var target: String
    package var kind: Kind

    package init(target: String, kind: Kind) {
        self.target = target
        self.kind = kind
    }

    /// The interface a probe on this path is bound to, for ``Kind/interface(_:)``.
    package var interface: String? {
        if case .interface(let name) = kind { return name }
        return nil
    }
}

extension ProbeTarget {
    /// The interface this probe must leave through (`SO_BINDTODEVICE`); `nil` follows the routes.
    package var interface: String? { variant?.interface }
}
