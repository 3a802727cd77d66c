import CNetlink
import Glibc
import ReachCore
import ReachSupport

/// The three kinds of kernel object a dump refreshes, in the order a full resync dumps them.
enum DumpKind: Sendable, Hashable, CaseIterable {
    case links
    case addresses
    case routes
}

/// What applying messages changed, so the source knows when to re-dump routes.
struct TableChanges: OptionSet, Sendable, Hashable {
    let rawValue: UInt8
    /// A link appeared, vanished, or changed admin state, carrier or operstate.
    static let linkState = TableChanges(rawValue: 1 << 0)
    /// An address went away: the kernel may have dropped routes using it without telling.
    static let addressRemoved = TableChanges(rawValue: 1 << 1)
}

/// The kernel's interfaces, addresses and main-table routes as netlink described them, keyed the way
/// the kernel identifies them, turned into a ``LinkSnapshot`` on demand.
///
/// Pure: messages in, snapshot out. A dump is reconciled by remembering what it (and events arriving
/// during it) mentioned and, when it ends consistently, dropping everything it did not.
struct InterfaceTable {
    struct LinkEntry: Hashable {
        var name: String
        var deviceType: UInt16
        var flags: UInt32
        var operState: OperState
        var linkKind: String?
        var isWireless: Bool
        var kind: InterfaceKind
    }

    struct AddressKey: Hashable {
        var index: UInt32
        var prefix: IPPrefix
    }

    /// A route as the kernel identifies it, per next hop.
    struct RouteKey: Hashable {
        var destination: IPPrefix
        var tos: UInt8
        var priority: UInt32
        var interfaceIndex: UInt32
        var gateway: IPAddress?
    }

    private let kindProbe: InterfaceKindProbe
    private(set) var links: [Int32: LinkEntry] = [:]
    private var addresses: [AddressKey: InterfaceAddress] = [:]
    private var routes: Set<RouteKey> = []

    private var linksSeenInDump: Set<Int32>?
    private var addressesSeenInDump: Set<AddressKey>?
    private var routesSeenInDump: Set<RouteKey>?

    /// Messages that decoded but described something impossible (an address of the wrong length, say).
    private(set) var rejectedCount = 0

    init(kindProbe: InterfaceKindProbe) {
        self.kindProbe = kindProbe
    }

    // MARK: Applying messages

    @discardableResult
    mutating func apply(_ message: NetlinkMessage) -> TableChanges {
        switch message.body {
        case .newLink(let link): return applyNewLink(link)
        case .deleteLink(let link): return applyDeleteLink(link)
        case .newAddress(let address):
            applyAddress(address, removing: false)
            return []
        case .deleteAddress(let address): return applyAddress(address, removing: true) ? .addressRemoved : []
        case .newRoute(let route):
            applyRoute(route, removing: false, replacing: message.header.isReplace)
            return []
        case .deleteRoute(let route):
            applyRoute(route, removing: true, replacing: false)
            return []
        case .done, .error, .other: return []
        }
    }

    private mutating func applyNewLink(_ message: LinkMessage) -> TableChanges {
        // AF_BRIDGE messages describe bridge ports, not devices: their DELLINK means "left the bridge".
        guard message.family == UInt8(AF_UNSPEC) else { return [] }
        let index = message.index
        linksSeenInDump?.insert(index)
        let previous = links[index]
        guard
            var entry = previous
                ?? message.name.map({ name in
                    LinkEntry(
                        name: name,
                        deviceType: message.deviceType,
                        flags: message.flags,
                        operState: .unknown,
                        linkKind: message.linkKind,
                        isWireless: message.hasWirelessAttribute,
                        kind: .other
                    )
                })
        else {
            // A partial notification about a link we have not seen: nothing to build an entry from.
            linksSeenInDump?.remove(index)
            return []
        }
        entry.flags = message.flags
        entry.deviceType = message.deviceType
        entry.isWireless = entry.isWireless || message.hasWirelessAttribute
        if let name = message.name {
            // Only complete messages carry the name; only they can say the link kind is gone.
            entry.name = name
            entry.linkKind = message.linkKind
        }
        if let operState = message.operState {
            entry.operState = Self.operState(operState)
        }
        let identityChanged =
            previous.map {
                $0.name != entry.name || $0.linkKind != entry.linkKind || $0.deviceType != entry.deviceType
                    || $0.isWireless != entry.isWireless || ($0.flags ^ entry.flags) & UInt32(IFF_LOOPBACK) != 0
            } ?? true
        if identityChanged {
            entry.kind = kindProbe.kind(
                name: entry.name,
                deviceType: entry.deviceType,
                flags: entry.flags,
                linkKind: entry.linkKind,
                hasWirelessAttribute: entry.isWireless
            )
        }
        links[index] = entry
        let stateChanged = previous.map { !Self.sameState($0, entry) } ?? true
        return stateChanged ? .linkState : []
    }

    private mutating func applyDeleteLink(_ message: LinkMessage) -> TableChanges {
        guard message.family == UInt8(AF_UNSPEC) else { return [] }
        linksSeenInDump?.remove(message.index)
        return removeLink(message.index) ? .linkState : []
    }

    /// Drops a link and what hangs off it; the kernel deletes those with the device.
    private mutating func removeLink(_ index: Int32) -> Bool {
        guard links.removeValue(forKey: index) != nil else { return false }
        let interfaceIndex = UInt32(bitPattern: index)
        addresses = addresses.filter { $0.key.index != interfaceIndex }
        routes = routes.filter { $0.interfaceIndex != interfaceIndex }
        return true
    }

    /// Returns whether something was removed.
    @discardableResult
    private mutating func applyAddress(_ message: AddressMessage, removing: Bool) -> Bool {
        guard let own = message.ownAddress, let address = IPAddress(bytes: own),
            Self.family(message.family) == address.family,
            let prefix = IPPrefix(address: address, length: Int(message.prefixLength))
        else {
            rejectedCount += 1
            return false
        }
        let key = AddressKey(index: message.index, prefix: prefix)
        if removing {
            addressesSeenInDump?.remove(key)
            return addresses.removeValue(forKey: key) != nil
        }
        addressesSeenInDump?.insert(key)
        let tentativeBits = UInt32(IFA_F_TENTATIVE) | UInt32(IFA_F_DADFAILED)
        addresses[key] = InterfaceAddress(
            prefix: prefix,
            scope: Self.scope(message.scope),
            isTentative: message.flags & tentativeBits != 0
        )
        return false
    }

    private mutating func applyRoute(_ message: RouteMessage, removing: Bool, replacing: Bool) {
        guard message.table == UInt32(RT_TABLE_MAIN.rawValue),
            message.type == UInt8(RTN_UNICAST),
            message.flags & UInt32(RTM_F_CLONED) == 0
        else { return }
        guard let family = Self.family(message.family),
            let destination = Self.destination(message, family: family)
        else {
            rejectedCount += 1
            return
        }
        let priority = message.priority ?? 0
        if replacing {
            routes = routes.filter {
                !($0.destination == destination && $0.tos == message.tos && $0.priority == priority)
            }
        }
        for hop in message.nextHops {
            let gateway: IPAddress?
            if let bytes = hop.gateway {
                guard let parsed = IPAddress(bytes: bytes) else {
                    rejectedCount += 1
                    continue
                }
                gateway = parsed
            } else {
                gateway = nil
            }
            let key = RouteKey(
                destination: destination,
                tos: message.tos,
                priority: priority,
                interfaceIndex: hop.interfaceIndex,
                gateway: gateway
            )
            if removing {
                routesSeenInDump?.remove(key)
                routes.remove(key)
            } else {
                routesSeenInDump?.insert(key)
                routes.insert(key)
            }
        }
    }

    // MARK: Dumps

    /// Starts remembering what the dump of `kind` (and concurrent events) mentions.
    mutating func beginDump(_ kind: DumpKind) {
        switch kind {
        case .links: linksSeenInDump = []
        case .addresses: addressesSeenInDump = []
        case .routes: routesSeenInDump = []
        }
    }

    /// Ends a dump. A consistent dump removes whatever it did not mention: objects whose deletion the
    /// kernel never announced, or whose announcement was lost to an overrun. An inconsistent one
    /// (`NLM_F_DUMP_INTR`, or failed) may have skipped objects, so it only adds.
    mutating func endDump(_ kind: DumpKind, consistent: Bool) -> TableChanges {
        var changes: TableChanges = []
        switch kind {
        case .links:
            if consistent, let seen = linksSeenInDump {
                for index in links.keys where !seen.contains(index) && removeLink(index) {
                    changes.insert(.linkState)
                }
            }
            linksSeenInDump = nil
        case .addresses:
            if consistent, let seen = addressesSeenInDump {
                let before = addresses.count
                addresses = addresses.filter { seen.contains($0.key) }
                if addresses.count != before { changes.insert(.addressRemoved) }
            }
            addressesSeenInDump = nil
        case .routes:
            if consistent, let seen = routesSeenInDump {
                routes = routes.intersection(seen)
            }
            routesSeenInDump = nil
        }
        return changes
    }

    // MARK: Snapshot

    func snapshot() -> LinkSnapshot {
        var addressesByIndex: [UInt32: [InterfaceAddress]] = [:]
        for (key, address) in addresses { addressesByIndex[key.index, default: []].append(address) }
        var routesByIndex: [UInt32: [Route]] = [:]
        for key in routes {
            routesByIndex[key.interfaceIndex, default: []].append(
                Route(destination: key.destination, gateway: key.gateway)
            )
        }
        let interfaces = links.map { index, entry in
            let interfaceIndex = UInt32(bitPattern: index)
            return InterfaceFacts(
                index: Int(index),
                name: entry.name,
                kind: entry.kind,
                linkKind: entry.linkKind,
                isAdminUp: entry.flags & UInt32(IFF_UP) != 0,
                isLowerUp: entry.flags & UInt32(CNETLINK_IFF_LOWER_UP) != 0,
                operState: entry.operState,
                addresses: (addressesByIndex[interfaceIndex] ?? []).sorted { Self.order($0.prefix, $1.prefix) },
                routes: (routesByIndex[interfaceIndex] ?? []).sorted(by: Self.order)
            )
        }
        return LinkSnapshot(interfaces: interfaces)
    }

    // MARK: Conversions

    /// Admin state, carrier and operstate: what a route re-dump must follow.
    private static func sameState(_ lhs: LinkEntry, _ rhs: LinkEntry) -> Bool {
        let watched = UInt32(IFF_UP) | UInt32(CNETLINK_IFF_LOWER_UP) | UInt32(CNETLINK_IFF_RUNNING)
        return lhs.flags & watched == rhs.flags & watched && lhs.operState == rhs.operState
    }

    static func family(_ family: UInt8) -> IPFamily? {
        switch Int32(family) {
        case AF_INET: .ipv4
        case AF_INET6: .ipv6
        default: nil
        }
    }

    private static func destination(_ message: RouteMessage, family: IPFamily) -> IPPrefix? {
        let address: IPAddress?
        if let bytes = message.destination {
            address = IPAddress(bytes: bytes)
        } else {
            // No RTA_DST: the all-zero address, as in a default route.
            address = IPAddress(family: family, value: 0)
        }
        guard let address, address.family == family else { return nil }
        return IPPrefix(address: address, length: Int(message.destinationLength))
    }

    /// `IF_OPER_*` from RFC 2863 order.
    static func operState(_ value: UInt8) -> OperState {
        switch value {
        case 1: .notPresent
        case 2: .down
        case 3: .lowerLayerDown
        case 4: .testing
        case 5: .dormant
        case 6: .up
        default: .unknown
        }
    }

    /// `RT_SCOPE_*`: 0 universe, 200 site, 253 link, 254 host, 255 nowhere; user-defined values in
    /// between are narrower than global, so they count as site.
    static func scope(_ value: UInt8) -> AddressScope {
        switch value {
        case 0: .global
        case 253: .link
        case 254, 255: .host
        default: .site
        }
    }

    private static func order(_ lhs: IPPrefix, _ rhs: IPPrefix) -> Bool {
        (lhs.address, lhs.length) < (rhs.address, rhs.length)
    }

    private static func order(_ lhs: Route, _ rhs: Route) -> Bool {
        if lhs.destination != rhs.destination { return order(lhs.destination, rhs.destination) }
        switch (lhs.gateway, rhs.gateway) {
        case let (left?, right?): return left < right
        case (nil, _?): return true
        default: return false
        }
    }
}
