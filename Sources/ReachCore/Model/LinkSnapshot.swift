import ReachSupport

/// The state of every network interface at one moment, as a link source last saw it.
package struct LinkSnapshot: Sendable, Hashable {
    /// Ordered by interface index.
    package var interfaces: [InterfaceFacts]

    package init(interfaces: [InterfaceFacts]) {
        self.interfaces = interfaces.sorted { $0.index < $1.index }
    }

    package subscript(name name: String) -> InterfaceFacts? {
        interfaces.first { $0.name == name }
    }
}

/// Whether the machine has a usable link, and if not, how far it got.
///
/// **The usable-link rule.** An interface is usable when it is not loopback, passes the
/// ``InterfaceFilter``, is administratively up, has carrier (``InterfaceFacts/hasCarrier``), and for
/// some IP family has both a global, non-tentative address and either a default route or a route
/// covering one of the targets' literal IP addresses (so an isolated LAN with a local server counts).
package struct LinkAssessment: Sendable, Hashable {
    /// Names of the usable interfaces, in index order.
    package var usableInterfaces: [String]
    /// Why nothing is usable: `noLink`, `noAddress` or `noRoute`; `nil` when something is.
    package var blocker: LinkBlocker?

    package var isUsable: Bool { blocker == nil }

    package init(_ snapshot: LinkSnapshot, filter: InterfaceFilter, targetAddresses: [IPAddress] = []) {
        var furthest = LinkBlocker.noLink
        var usable: [String] = []
        for interface in snapshot.interfaces where interface.kind != .loopback && filter.admits(interface.name) {
            guard interface.isAdminUp, interface.hasCarrier else { continue }
            let families = interface.usableAddressFamilies
            guard !families.isEmpty else {
                furthest = max(furthest, .noAddress)
                continue
            }
            let routed = families.contains { family in
                interface.routes.contains { route in
                    route.destination.family == family
                        && (route.destination.isDefault || targetAddresses.contains(where: route.destination.contains))
                }
            }
            if routed {
                usable.append(interface.name)
            } else {
                furthest = max(furthest, .noRoute)
            }
        }
        self.usableInterfaces = usable
        self.blocker = usable.isEmpty ? furthest : nil
    }
}

/// The furthest a machine without a usable link got, in order: carrier, then an address, then a route.
package enum LinkBlocker: Int, Sendable, Hashable, Comparable {
    /// No admitted interface is up with carrier.
    case noLink
    /// An interface has carrier but no global address (DHCP or SLAAC has not finished, say).
    case noAddress
    /// An interface has an address but no default route and no route to the targets.
    case noRoute

    package static func < (lhs: LinkBlocker, rhs: LinkBlocker) -> Bool { lhs.rawValue < rhs.rawValue }
}
