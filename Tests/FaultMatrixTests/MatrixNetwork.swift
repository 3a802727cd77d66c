import Foundation
import ReachTestRigs

/// The fault matrix's network: two namespaces of its own joined by a veth pair.
///
/// `host` is where reachd runs (interface `m0`, 198.51.100.2/32 and a default route via .1 "onlink",
/// the server's name `server.test` in its own `/etc/hosts`, a resolver that answers nothing);
/// `server` is where the test servers run (interface `m1`, .1 for HTTP and .3 for gRPC). The host's
/// address is a /32 so that the servers are reachable only through the default route: removing it
/// really cuts them off. Faults are `ip` commands on either side. Both are ``TestNamespace``s,
/// removed in ``tearDown()`` with the veths and their `/etc/netns` files.
final class MatrixNetwork: Sendable {
    static let hostAddress = "198.51.100.2"
    static let serverAddress = "198.51.100.1"
    /// The gRPC server's own address on the same link, so that blackholing the HTTP server's
    /// address leaves the gRPC server alone.
    static let grpcAddress = "198.51.100.3"
    static let serverName = "server.test"
    /// IPv6 on the same link, for the cases where the server's name answers on both families.
    static let serverAddress6 = "2001:db8::1"
    static let hostAddress6 = "2001:db8::2"
    /// An IPv6 address on the link that no host answers for: connects to it hang.
    static let silentAddress6 = "2001:db8::99"
    /// The server namespace's routing table for the blackhole: a rule sends what the HTTP server's
    /// address sends through it, and it drops everything, so SYNs arrive and no answer leaves.
    static let blackholeTable = "100"

    let host: TestNamespace
    let server: TestNamespace

    private init(host: TestNamespace, server: TestNamespace) {
        self.host = host
        self.server = server
    }

    /// Builds both namespaces and the link between them; on failure, removes what was built.
    static func make() async throws -> MatrixNetwork {
        let namespaces = try await TestNamespace.make(["matrix-host", "matrix-server"])
        let network = MatrixNetwork(host: namespaces[0], server: namespaces[1])
        do {
            try network.host.writeEtc("resolv.conf", "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
            try network.setServerNameResolves(true)
            try await network.createLink()
        } catch {
            await network.tearDown()
            throw error
        }
        return network
    }

    /// The veth pair, both ends up, addressed, with the default route: what every case restores.
    func createLink() async throws {
        try await host.addVeth("m0", peer: "m1", in: server)
        try await server.ipBatch(
            [Self.serverAddress, Self.grpcAddress, PortalServer.address, PortalServer.checkAddress].map {
                "addr add \($0)/24 dev m1"
            } + ["link set m1 up", "route replace blackhole default table \(Self.blackholeTable)"]
        )
        try await host.ipBatch([
            "addr add \(Self.hostAddress)/32 dev m0", "link set m0 up",
            "route replace default via \(Self.serverAddress) dev m0 onlink",
        ])
    }

    /// Starts or ends the HTTP server's blackhole: packets reach it, its answers vanish.
    func setBlackhole(_ on: Bool) async throws {
        try await server.ip(
            "rule",
            on ? "add" : "del",
            "from",
            Self.serverAddress,
            "lookup",
            Self.blackholeTable,
            "pref",
            "100"
        )
    }

    static let nftPath =
        ["/usr/sbin/nft", "/sbin/nft"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "nft"

    /// Starts or ends the captive portal the way real ones are built: the server namespace, the
    /// host's router, sends the host's web traffic (TCP 80 and 8080, 443 and 8443) to the portal's
    /// server with DNAT; the host is let through once "signed in" (the rule deleted).
    func setPortal(_ on: Bool) async throws {
        let rules =
            on
            ? """
            table ip portal {
                chain prerouting {
                    type nat hook prerouting priority dstnat; policy accept;
                    ip saddr \(Self.hostAddress) tcp dport { 80, 8080 } dnat to \(PortalServer.address):\(PortalServer.port)
                    ip saddr \(Self.hostAddress) tcp dport { 443, 8443 } dnat to \(PortalServer.address):\(PortalServer.tlsPort)
                }
            }

            """
            : "delete table ip portal\n"
        try await server.execute([Self.nftPath, "-f", "-"], input: rules)
    }

    /// Puts back whatever a case took away: the link up on both sides, the address, the default route.
    func restoreLink() async throws {
        try await server.ip("link", "set", "m1", "up")
        try await host.ipBatch([
            "link set m0 up", "addr replace \(Self.hostAddress)/32 dev m0",
            "route replace default via \(Self.serverAddress) dev m0 onlink",
        ])
    }

    /// Gives the link IPv6 (both ends addressed, a default route) and the server's name an AAAA
    /// record as well, while the test servers listen on IPv4 only: the name answers on one family.
    /// The AAAA record is the server's (connects are refused) or, `silent`, an address no host
    /// answers for (connects hang). `nil` takes IPv6 away again.
    func setIPv6(silent: Bool?) async throws {
        guard let silent else {
            try setServerNameResolves(true)
            try await host.ip("-6", "addr", "flush", "dev", "m0", "scope", "global")
            try await server.ip("-6", "addr", "flush", "dev", "m1", "scope", "global")
            return
        }
        try await server.ip("-6", "addr", "replace", "\(Self.serverAddress6)/64", "dev", "m1", "nodad")
        try await host.ip("-6", "addr", "replace", "\(Self.hostAddress6)/64", "dev", "m0", "nodad")
        try await host.ip("-6", "route", "replace", "default", "via", Self.serverAddress6, "dev", "m0")
        try setServerNameResolves(true, ipv6: silent ? Self.silentAddress6 : Self.serverAddress6)
    }

    /// Writes `server.test` into (or out of) the host namespace's `/etc/hosts`, in place
    /// (``TestNamespace/writeEtc(_:_:)``: reachd has it bind-mounted; the IPv4 line always comes
    /// first, so a probe resolving meanwhile reads the old file or the new one's IPv4 address).
    func setServerNameResolves(_ resolves: Bool, ipv6: String? = nil) throws {
        // The portal's own name (its certificate's, where its RFC 8908 API answers) always resolves.
        let text =
            "127.0.0.1 localhost\n\(PortalServer.address) portal.test\n"
            + (resolves ? "\(Self.serverAddress) \(Self.serverName)\n" : "")
            + (resolves ? ipv6.map { "\($0) \(Self.serverName)\n" } ?? "" : "")
        try host.writeEtc("hosts", text)
    }

    /// Removes both namespaces (which takes the veths with them) and their `/etc/netns` files.
    func tearDown() async {
        await host.delete()
        await server.delete()
    }
}
