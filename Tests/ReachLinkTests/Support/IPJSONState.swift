import Foundation
import ReachCore
import ReachSupport
import ReachTestRigs

/// What `ip -j` says about a namespace, reduced to what a ``LinkSnapshot`` carries, so the two can be
/// compared: names, indices, admin and carrier flags, operstate, link kind, addresses with scope and
/// tentativeness, and main-table unicast routes (default routes included) per interface.
struct IPJSONState: Equatable, CustomStringConvertible {
    struct Interface: Equatable {
        var index: Int
        var name: String
        var isAdminUp: Bool
        var isLowerUp: Bool
        var operState: OperState
        var linkKind: String?
        var addresses: Set<String>
        var routes: Set<String>
    }

    var interfaces: [Int: Interface]

    var description: String {
        interfaces.keys.sorted().compactMap { interfaces[$0] }.map { "\($0)" }.joined(separator: "\n")
    }

    /// Reads `ip -d -j link show`, `ip -j addr show`, `ip -j route show table main` and the same for IPv6.
    static func read(_ namespace: TestNamespace) async throws -> IPJSONState {
        let links = try await array(namespace.ip("-d", "-j", "link", "show"))
        let addresses = try await array(namespace.ip("-j", "addr", "show"))
        let routes4 = try await array(namespace.ip("-4", "-j", "route", "show", "table", "main")).map {
            ($0, "0.0.0.0/0")
        }
        let routes =
            try await routes4 + array(namespace.ip("-6", "-j", "route", "show", "table", "main")).map { ($0, "::/0") }
        var interfaces: [Int: Interface] = [:]
        var indexByName: [String: Int] = [:]
        for link in links {
            guard let index = link["ifindex"] as? Int, let name = link["ifname"] as? String else { continue }
            let flags = link["flags"] as? [String] ?? []
            let linkKind = (link["linkinfo"] as? [String: Any])?["info_kind"] as? String
            interfaces[index] = Interface(
                index: index,
                name: name,
                isAdminUp: flags.contains("UP"),
                isLowerUp: flags.contains("LOWER_UP"),
                operState: operState(link["operstate"] as? String),
                linkKind: linkKind,
                addresses: [],
                routes: []
            )
            indexByName[name] = index
        }
        for entry in addresses {
            guard let index = entry["ifindex"] as? Int else { continue }
            for info in entry["addr_info"] as? [[String: Any]] ?? [] {
                guard let local = info["local"] as? String, let length = info["prefixlen"] as? Int,
                    let prefix = IPPrefix("\(local)/\(length)")
                else { continue }
                let tentative = info["tentative"] as? Bool == true || info["dadfailed"] as? Bool == true
                interfaces[index]?.addresses.insert(
                    addressKey(prefix, scope: info["scope"] as? String ?? "?", tentative: tentative)
                )
            }
        }
        for (route, defaultDestination) in routes where (route["type"] as? String ?? "unicast") == "unicast" {
            guard let destination = route["dst"] as? String,
                let prefix = IPPrefix(destination == "default" ? defaultDestination : destination)
            else { continue }
            // A multipath route lists its hops under "nexthops"; ip omits /32 and /128 on host routes,
            // which IPPrefix reads as host prefixes.
            for hop in (route["nexthops"] as? [[String: Any]]) ?? [route] {
                guard let device = hop["dev"] as? String, let index = indexByName[device] else { continue }
                let gateway = (hop["gateway"] as? String).flatMap { IPAddress($0) }
                interfaces[index]?.routes.insert(routeKey(prefix, gateway: gateway))
            }
        }
        return IPJSONState(interfaces: interfaces)
    }

    init(interfaces: [Int: Interface]) {
        self.interfaces = interfaces
    }

    /// The same projection of an adapter snapshot.
    init(_ snapshot: LinkSnapshot) {
        var interfaces: [Int: Interface] = [:]
        for facts in snapshot.interfaces {
            interfaces[facts.index] = Interface(
                index: facts.index,
                name: facts.name,
                isAdminUp: facts.isAdminUp,
                isLowerUp: facts.isLowerUp,
                operState: facts.operState,
                linkKind: facts.linkKind,
                addresses: Set(
                    facts.addresses.map {
                        Self.addressKey($0.prefix, scope: $0.scope.rawValue, tentative: $0.isTentative)
                    }
                ),
                routes: Set(facts.routes.map { Self.routeKey($0.destination, gateway: $0.gateway) })
            )
        }
        self.interfaces = interfaces
    }

    /// Human-readable differences; empty when the snapshot matches `ip`.
    static func differences(_ snapshot: LinkSnapshot, _ ip: IPJSONState) -> [String] {
        let ours = IPJSONState(snapshot)
        var lines: [String] = []
        for index in Set(ours.interfaces.keys).union(ip.interfaces.keys).sorted() {
            switch (ours.interfaces[index], ip.interfaces[index]) {
            case let (mine?, theirs?) where mine != theirs:
                lines.append("index \(index):\n  adapter: \(mine)\n  ip:      \(theirs)")
            case (let mine?, nil):
                lines.append("index \(index) only in the adapter: \(mine)")
            case (nil, let theirs?):
                lines.append("index \(index) only in ip: \(theirs)")
            default:
                break
            }
        }
        return lines
    }

    private static func addressKey(_ prefix: IPPrefix, scope: String, tentative: Bool) -> String {
        "\(prefix) \(scope)\(tentative ? " tentative" : "")"
    }

    private static func routeKey(_ destination: IPPrefix, gateway: IPAddress?) -> String {
        "\(destination) via \(gateway.map { "\($0)" } ?? "-")"
    }

    private static func operState(_ text: String?) -> OperState {
        switch text {
        case "UP": .up
        case "DOWN": .down
        case "LOWERLAYERDOWN": .lowerLayerDown
        case "NOTPRESENT": .notPresent
        case "TESTING": .testing
        case "DORMANT": .dormant
        default: .unknown
        }
    }

    private static func array(_ json: String) throws -> [[String: Any]] {
        let trimmed = json.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return [] }
        return try JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [[String: Any]] ?? []
    }
}
