import Foundation
import ReachCore
import ReachPOSIX
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

@testable import ReachLink

/// The neighbour-table reader alone, on the kernel's real table in a network namespace of the
/// test's own: entries put there with `ip neigh add … nud STATE`, or made by the kernel itself,
/// read back by the rtnetlink dump for the right address and interface, both families.
///
/// Two veths, `n0` (10.78.0.1, fd78::1) and `n2` (10.78.2.1, fd78:2::1), whose peers have no
/// address. On `n0` the kernel's timers are stretched so that every state stays put while the test
/// reads it; on `n2` they are short, so that a state the kernel makes moves on quickly.
@Suite(
    "Neighbour table in a network namespace",
    .enabled(if: TestNamespace.isAvailable, Comment(rawValue: TestNamespace.unavailableReason))
)
struct NeighbourTableTests {
    /// The states `ip neigh add` can set, and how the reader names them.
    static let states: [(nud: String, name: String, unreachable: Bool)] = [
        ("permanent", "PERMANENT", false), ("reachable", "REACHABLE", false), ("stale", "STALE", false),
        ("failed", "FAILED", true), ("incomplete", "INCOMPLETE", true),
    ]

    private func address(_ family: IPFamily, link: Int, host: Int) -> String {
        family == .ipv4 ? "10.78.\(link).\(host)" : (link == 0 ? "fd78::\(host)" : "fd78:\(link)::\(host)")
    }

    private func wired() async throws -> TestNamespace {
        let namespace = try await TestNamespace.make("neigh")
        do {
            try await namespace.ip("link", "set", "lo", "up")
            for link in [0, 2] {
                try await namespace.ip("link", "add", "n\(link)", "type", "veth", "peer", "name", "n\(link + 1)")
                try await namespace.ip("addr", "add", "\(address(.ipv4, link: link, host: 1))/24", "dev", "n\(link)")
                try await namespace.ip(
                    "-6",
                    "addr",
                    "add",
                    "\(address(.ipv6, link: link, host: 1))/64",
                    "dev",
                    "n\(link)",
                    "nodad"
                )
                try await namespace.ip("link", "set", "n\(link + 1)", "up")
                try await namespace.ip("link", "set", "n\(link)", "up")
            }
            let (slow, quick) = ("60000", "100")
            for family in ["ipv4", "ipv6"] {
                try await namespace.sysctl(
                    "net.\(family).neigh.n0.retrans_time_ms=\(slow)",
                    "net.\(family).neigh.n0.base_reachable_time_ms=600000",
                    "net.\(family).neigh.n2.retrans_time_ms=\(quick)"
                )
            }
        } catch {
            await namespace.delete()
            throw error
        }
        return namespace
    }

    /// The interface's index, as the namespace knows it.
    private func index(of interface: String, in namespace: TestNamespace) async throws -> Int {
        let index = try await namespace.enter { Int(if_nametoindex(interface)) }
        try #require(index > 0, "no \(interface)")
        return index
    }

    @Test(arguments: IPFamily.allCases)
    func eachStateIsReadForItsAddressAndInterface(family: IPFamily) async throws {
        let namespace = try await wired()
        var added: [String: String] = [:]
        var commands: [String] = []
        for (offset, state) in Self.states.enumerated() {
            let neighbour = address(family, link: 0, host: 11 + offset)
            let linkLayer =
                state.nud == "failed" || state.nud == "incomplete" ? "" : "lladdr 02:00:00:00:00:\(11 + offset)"
            commands.append("neigh add \(neighbour) \(linkLayer) dev n0 nud \(state.nud)")
            added[neighbour] = state.name
        }
        // The same address on the other interface, in another state: the reader must not mix them up.
        let shared = address(family, link: 0, host: 12)
        commands.append("neigh add \(shared) dev n2 nud failed")
        try await namespace.ipBatch(commands)
        let (n0, n2) = (try await index(of: "n0", in: namespace), try await index(of: "n2", in: namespace))

        let (entries, onN0, onN2, unknown) = try await namespace.enter {
            let entries = try NeighbourTable.dump(family: family)
            let address = { (text: String) in IPAddress(text)! }
            return (
                entries, await NeighbourTable.state(of: address(shared), interfaceIndex: n0),
                await NeighbourTable.state(of: address(shared), interfaceIndex: n2),
                await NeighbourTable.state(of: address(self.address(family, link: 0, host: 99)), interfaceIndex: n0)
            )
        }
        await namespace.delete()

        #expect(entries.allSatisfy { $0.address.family == family }, "\(entries)")
        let read = Dictionary(
            entries.filter { $0.index == n0 }.map { ("\($0.address)", $0.state.description) },
            uniquingKeysWith: { $1 }
        )
        for (neighbour, name) in added {
            #expect(read[neighbour] == name, "\(neighbour) on n0: \(read[neighbour] ?? "missing") in \(entries)")
        }
        for (offset, state) in Self.states.enumerated() {
            let entry = entries.first {
                $0.index == n0 && "\($0.address)" == address(family, link: 0, host: 11 + offset)
            }
            #expect(entry?.state.isUnreachable == state.unreachable, "\(state.name)")
        }
        #expect(onN0?.description == "REACHABLE")
        #expect(onN2?.description == "FAILED")
        #expect(unknown == nil, "no entry, no state")
    }

    @Test(arguments: IPFamily.allCases)
    func aNeighbourThatNeverAnswersIsReadIncompleteThenFailed(family: IPFamily) async throws {
        let namespace = try await wired()
        let n2 = try await index(of: "n2", in: namespace)
        let silent = try #require(IPAddress(address(family, link: 2, host: 99)))
        // A datagram to an address on n2's link that nobody holds: the kernel asks for it and gives up.
        let states = try await namespace.enter {
            let descriptor = socket(
                family == .ipv4 ? AF_INET : AF_INET6,
                Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                0
            )
            defer { close(descriptor) }
            _ = silent.withSocketAddress(port: 9) { sendto(descriptor, "x", 1, 0, $0, $1) }
            var seen: [String] = []
            try? await waitUntil("the neighbour FAILED", timeout: .seconds(3)) {
                let state = await NeighbourTable.state(of: silent, interfaceIndex: n2)?.description ?? "none"
                if seen.last != state { seen.append(state) }
                return state == "FAILED"
            }
            return seen
        }
        await namespace.delete()
        #expect(states.first == "INCOMPLETE" && states.last == "FAILED", "\(states)")
    }

    @Test func aFreshNamespaceHasAnEmptyTable() async throws {
        let namespace = try await TestNamespace.make("neigh-empty")
        try await namespace.ip("link", "set", "lo", "up")
        let (ipv4, ipv6, state) = try await namespace.enter {
            (
                try NeighbourTable.dump(family: .ipv4), try NeighbourTable.dump(family: .ipv6),
                await NeighbourTable.state(of: IPAddress("127.0.0.1")!, interfaceIndex: 1)
            )
        }
        await namespace.delete()
        #expect(ipv4.isEmpty, "\(ipv4)")
        #expect(ipv6.isEmpty, "\(ipv6)")
        #expect(state == nil)
    }

    @Test(arguments: IPFamily.allCases)
    func anInterfaceThatWentAwayTakesItsEntriesAlong(family: IPFamily) async throws {
        let namespace = try await wired()
        let neighbour = address(family, link: 0, host: 12)
        try await namespace.ip(
            "neigh",
            "add",
            neighbour,
            "lladdr",
            "02:00:00:00:00:12",
            "dev",
            "n0",
            "nud",
            "permanent"
        )
        try await namespace.ip(
            "neigh",
            "add",
            neighbour,
            "lladdr",
            "02:00:00:00:00:12",
            "dev",
            "n2",
            "nud",
            "permanent"
        )
        let (n0, n2) = (try await index(of: "n0", in: namespace), try await index(of: "n2", in: namespace))
        try await namespace.ip("link", "del", "n2")
        let target = try #require(IPAddress(neighbour))
        let (entries, onN0, onN2) = try await namespace.enter {
            (
                try NeighbourTable.dump(family: family), await NeighbourTable.state(of: target, interfaceIndex: n0),
                await NeighbourTable.state(of: target, interfaceIndex: n2)
            )
        }
        await namespace.delete()
        #expect(!entries.contains { $0.index == n2 }, "\(entries)")
        #expect(onN0?.description == "PERMANENT")
        #expect(onN2 == nil)
    }
}
