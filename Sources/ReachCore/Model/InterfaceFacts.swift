import ReachSupport

/// What kind of network interface this is, as far as connectivity is concerned.
package enum InterfaceKind: String, Sendable, Hashable, CaseIterable {
    case ethernet
    case wifi
    /// Mobile broadband (LTE/5G modems).
    case wwan
    case loopback
    /// Software interfaces: veth, bridge, bond, vlan, wireguard, tun and the like.
    case virtual
    case other
}

/// RFC 2863 operational state, as the kernel reports it in `IFLA_OPERSTATE`.
package enum OperState: String, Sendable, Hashable, CaseIterable {
    case unknown
    case notPresent
    case down
    case lowerLayerDown
    case testing
    case dormant
    case up
}

/// The scope the kernel gives an address: only `global` addresses reach other networks.
package enum AddressScope: String, Sendable, Hashable {
    case global
    case site
    case link
    case host
}

/// One address assigned to an interface.
package struct InterfaceAddress: Sendable, Hashable {
    package var prefix: IPPrefix
    package var scope: AddressScope
    /// IPv6 duplicate-address detection has not finished (or failed): the address cannot be used yet.
    package var isTentative: Bool

    package init(prefix: IPPrefix, scope: AddressScope, isTentative: Bool = false) {
        self.prefix = prefix
        self.scope = scope
        self.isTentative = isTentative
    }

    package var family: IPFamily { prefix.family }
    /// A global, non-tentative address: one that can carry traffic beyond the link.
    package var isUsable: Bool { scope == .global && !isTentative }
}

/// A main-table unicast route that leaves through an interface.
package struct Route: Sendable, Hashable {
    package var destination: IPPrefix
    package var gateway: IPAddress?

    package init(destination: IPPrefix, gateway: IPAddress? = nil) {
        self.destination = destination
        self.gateway = gateway
    }
}

/// Everything the core needs to know about one network interface.
///
/// Link sources (netlink in production, in-memory in tests) fill these in; the core decides
/// from them whether the interface is usable.
package struct InterfaceFacts: Sendable, Hashable, Identifiable {
    /// The kernel's interface index: stable across renames.
    package var index: Int
    package var name: String
    package var kind: InterfaceKind
    /// The driver's link kind (`IFLA_INFO_KIND`: "veth", "bridge", "wireguard", ...), when it has one.
    package var linkKind: String?
    /// `IFF_UP`: the administrator enabled the interface.
    package var isAdminUp: Bool
    /// `IFF_LOWER_UP`: the driver reports a physical-layer signal.
    package var isLowerUp: Bool
    package var operState: OperState
    package var addresses: [InterfaceAddress]
    /// Main-table routes through this interface, default routes included.
    package var routes: [Route]

    package init(
        index: Int,
        name: String,
        kind: InterfaceKind,
        linkKind: String? = nil,
        isAdminUp: Bool,
        isLowerUp: Bool,
        operState: OperState,
        addresses: [InterfaceAddress] = [],
        routes: [Route] = []
    ) {
        self.index = index
        self.name = name
        self.kind = kind
        self.linkKind = linkKind
        self.isAdminUp = isAdminUp
        self.isLowerUp = isLowerUp
        self.operState = operState
        self.addresses = addresses
        self.routes = routes
    }

    package var id: Int { index }

    /// Carrier, judged the way the kernel documents it: operationally up, or — for drivers that
    /// never report an operational state — unknown with the lower layer up.
    package var hasCarrier: Bool {
        operState == .up || (operState == .unknown && isLowerUp)
    }

    /// The families for which this interface has a default route.
    package var defaultRouteFamilies: Set<IPFamily> {
        Set(routes.filter(\.destination.isDefault).map(\.destination.family))
    }

    /// The families for which this interface has a usable (global, non-tentative) address.
    package var usableAddressFamilies: Set<IPFamily> {
        Set(addresses.filter(\.isUsable).map(\.family))
    }
}
