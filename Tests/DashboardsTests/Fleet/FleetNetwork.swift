import Foundation
import ReachTestRigs
import Synchronization

/// A fleet of hosts in sites, built of network namespaces of the test's own (``TestNamespace``), for the questions a
/// fleet asks of its alerts: is it the server, for everyone, or one site's or one host's network?
///
/// ```
///  [host k.1] eth0 10.70.k.11 ─┐                                      ┌─ s1 10.71.1.2
///  [host k.2] eth0 10.70.k.12 ─┼─ lan 10.70.k.1 [site k router] wan ──┤   [server] 10.70.0.1:8080
///  ...                         ┘                10.71.k.1             └─ sK 10.71.K.2
///
///  every host: mgmt0 10.99.k.(10+h) ── br0 [mgmt] ── this namespace's 10.99.0.1 (Prometheus)
/// ```
///
/// Each site's router bridges its hosts' links and routes (forwarding on) to the server namespace,
/// which holds the shared HTTP server (a stand-in answering `/health`) on its loopback address.
/// Prometheus, in the test's own namespace, reaches every host's reachd over a management network
/// that no fault touches (reachd excludes `mgmt*` from its links), so a silent site is still scraped.
///
/// Faults are methods, each undone by calling it again with the opposite argument. Everything is
/// removed in ``tearDown()``: the server process and the namespaces (which take their veths, and
/// the management veth's end in this namespace, with them).
final class FleetNetwork: Sendable {
    /// One host: where one reachd runs.
    struct Host: Sendable, Hashable {
        var site: Int
        var number: Int

        /// The host's address on its site's LAN.
        var address: String { "10.70.\(site).\(10 + number)" }
        /// The host's management address, where Prometheus scrapes it.
        var managementAddress: String { "10.99.\(site).\(10 + number)" }
        /// The `site` label Prometheus gives it (file_sd).
        var siteName: String { "site\(site)" }
        /// The `instance` label: its management address and reachd's port.
        var instance: String { "\(managementAddress):\(FleetNetwork.reachdPort)" }
    }

    static let serverAddress = "10.70.0.1"
    static let serverPort = 8080
    static let serverURL = "http://\(serverAddress):\(serverPort)/health"
    /// Where every host's reachd listens, on its management address.
    static let reachdPort = 9780
    /// This namespace's end of the management network.
    static let managementGateway = "10.99.0.1"

    let sites: Int
    let hostsPerSite: Int
    let hosts: [Host]
    /// The namespaces: every host's, every site's router, the server's, the management network's.
    private let hostNamespaces: [Host: TestNamespace]
    private let routers: [TestNamespace]
    let serverNamespace: TestNamespace
    let managementNamespace: TestNamespace
    private let server = ServerProcess()

    private init(sites: Int, hostsPerSite: Int, hosts: [Host], namespaces: [TestNamespace]) {
        self.sites = sites
        self.hostsPerSite = hostsPerSite
        self.hosts = hosts
        serverNamespace = namespaces[0]
        managementNamespace = namespaces[1]
        routers = Array(namespaces[2..<(2 + sites)])
        hostNamespaces = Dictionary(uniqueKeysWithValues: zip(hosts, namespaces[(2 + sites)...]))
    }

    /// Builds everything and starts the server; on failure, removes whatever was built.
    static func make(sites: Int, hostsPerSite: Int) async throws -> FleetNetwork {
        // A crashed run's namespaces would still hold the management network's address.
        await TestNamespace.deleteLeftovers(labelled: "fleet-")
        let hosts = (1...sites).flatMap { site in (1...hostsPerSite).map { Host(site: site, number: $0) } }
        let labels =
            ["fleet-server", "fleet-mgmt"] + (1...sites).map { "fleet-site\($0)" }
            + hosts.map { "fleet-h\($0.site)-\($0.number)" }
        let network = FleetNetwork(
            sites: sites,
            hostsPerSite: hostsPerSite,
            hosts: hosts,
            namespaces: try await TestNamespace.make(labels)
        )
        do {
            try await network.build()
            try await network.setServer(running: true)
        } catch {
            await network.tearDown()
            throw error
        }
        return network
    }

    /// The namespace of `host`, and of site `site`'s router.
    func namespace(of host: Host) -> TestNamespace { hostNamespaces[host]! }
    func router(_ site: Int) -> TestNamespace { routers[site - 1] }
    /// This namespace's end of the management veth (at most 15 characters).
    private var managementLink: String { "rdf\(getpid() % 100_000)m" }

    private func build() async throws {
        try await managementNamespace.addVeth("root", peer: managementLink, in: nil)
        try await managementNamespace.ipBatch([
            "link add br0 type bridge", "link set br0 up", "link set root master br0", "link set root up",
        ])
        try await Self.ip(["addr", "add", "\(Self.managementGateway)/16", "dev", managementLink])
        try await Self.ip(["link", "set", managementLink, "up"])
        var serverLines = ["addr add \(Self.serverAddress)/32 dev lo"]
        for site in 1...sites {
            try await router(site).addVeth("wan", peer: "s\(site)", in: serverNamespace)
            try await router(site).ipBatch([
                "link add lan type bridge", "addr add 10.70.\(site).1/24 dev lan", "link set lan up",
                "addr add 10.71.\(site).1/30 dev wan", "link set wan up", "route add default via 10.71.\(site).2",
            ])
            try await router(site).sysctl("net.ipv4.ip_forward=1")
            serverLines += [
                "addr add 10.71.\(site).2/30 dev s\(site)", "link set s\(site) up",
                "route add 10.70.\(site).0/24 via 10.71.\(site).1",
            ]
        }
        try await serverNamespace.ipBatch(serverLines)
        for host in hosts {
            let namespace = namespace(of: host)
            let (link, management) = ("h\(host.number)", "m\(host.site)-\(host.number)")
            try await namespace.addVeth("eth0", peer: link, in: router(host.site))
            try await namespace.addVeth("mgmt0", peer: management, in: managementNamespace)
            try await namespace.ipBatch([
                "addr add \(host.address)/24 dev eth0", "link set eth0 up",
                "route add default via 10.70.\(host.site).1", "addr add \(host.managementAddress)/16 dev mgmt0",
                "link set mgmt0 up",
            ])
            try await router(host.site).ipBatch(["link set \(link) master lan", "link set \(link) up"])
            try await managementNamespace.ipBatch(["link set \(management) master br0", "link set \(management) up"])
            // reachd asks the gateway itself (ICMP echo) whose fault a failure is, as systemd's sysctl allows.
            try await namespace.sysctl("net.ipv4.ping_group_range=0 2147483647")
        }
    }

    /// Starts or stops the shared server (stopped: connections to it are refused).
    func setServer(running: Bool) async throws {
        try await server.set(running: running, namespace: serverNamespace)
    }

    /// Removes (or puts back) the site router's address on its LAN: the gateway goes silent
    /// (neither ARP nor ICMP answer), while every host's route still points at it.
    func setRouterSilent(_ site: Int, _ silent: Bool) async throws {
        try await router(site).ip("addr", silent ? "del" : "add", "10.70.\(site).1/24", "dev", "lan")
    }

    /// Takes one host's link down (or up again, with its default route back).
    func setLink(of host: Host, up: Bool) async throws {
        let namespace = namespace(of: host)
        try await namespace.ip("link", "set", "eth0", up ? "up" : "down")
        if up { try await namespace.ip("route", "replace", "default", "via", "10.70.\(host.site).1") }
    }

    /// Stops the server and removes the namespaces (the management veth's end here goes with its peer).
    func tearDown() async {
        await server.stop()
        for namespace in [serverNamespace, managementNamespace] + routers + hosts.map(namespace(of:)) {
            await namespace.delete()
        }
    }

    /// `ip ARGS...` in the test's own namespace, where Prometheus scrapes the management network.
    private static func ip(_ arguments: [String]) async throws {
        try await TestNamespace.runOffPool([TestNamespace.ipPath] + arguments)
    }
}

/// The shared server: a ``ReachTesting/StandInServer`` in the server namespace, answering `/health`.
private final class ServerProcess: Sendable {
    private let server = Mutex<StandInServer?>(nil)

    func set(running: Bool, namespace: TestNamespace) async throws {
        guard running else { return await stop() }
        let started = try StandInServer(
            name: "fleet-server",
            listen: ["\(FleetNetwork.serverAddress):\(FleetNetwork.serverPort)"],
            path: "/health",
            namespace: namespace
        )
        server.withLock { $0 = started }
        try await started.waitUntilReady()
    }

    func stop() async {
        await server.withLock({ state -> StandInServer? in
            defer { state = nil }
            return state
        })?.stop()
    }
}
