import Foundation
import ReachTestRigs
import Synchronization

/// A fleet of hosts in sites, built of network namespaces of the test's own, for the questions a
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
    private let prefix: String
    private let server = ServerProcess()

    init(sites: Int, hostsPerSite: Int) {
        self.sites = sites
        self.hostsPerSite = hostsPerSite
        hosts = (1...sites).flatMap { site in (1...hostsPerSite).map { Host(site: site, number: $0) } }
        prefix = "rdf\(getpid())"
    }

    /// The namespace of `host`, of site `site`'s router, of the server, of the management network.
    func namespace(of host: Host) -> String { "\(prefix)-h\(host.site)-\(host.number)" }
    func router(_ site: Int) -> String { "\(prefix)-site\(site)" }
    var serverNamespace: String { "\(prefix)-server" }
    var managementNamespace: String { "\(prefix)-mgmt" }
    /// This namespace's end of the management veth (at most 15 characters).
    private var managementLink: String { "rdf\(getpid() % 100_000)m" }

    /// Builds everything and starts the server; on failure, removes whatever was built.
    func setUp() async throws {
        // Leftovers of a crashed run (this pid's, or a process's that is gone) would hold the
        // management network's address.
        await removeNamespaces { name in
            guard let pid = name.dropFirst(3).prefix(while: \.isNumber).nonEmpty.flatMap({ Int32($0) }) else {
                return false
            }
            return pid == getpid() || (kill(pid, 0) != 0 && errno == ESRCH)
        }
        do {
            try await build()
            try await setServer(running: true)
        } catch {
            await tearDown()
            throw error
        }
    }

    private func build() async throws {
        let namespaces = [serverNamespace, managementNamespace] + (1...sites).map(router) + hosts.map(namespace(of:))
        for name in namespaces { try await Self.ip(["netns", "add", name]) }
        try await Self.ip([
            "link", "add", managementLink, "type", "veth", "peer", "name", "root", "netns", managementNamespace,
        ])
        try await batch(
            managementNamespace,
            [
                "link set lo up", "link add br0 type bridge", "link set br0 up", "link set root master br0",
                "link set root up",
            ]
        )
        try await Self.ip(["addr", "add", "\(Self.managementGateway)/16", "dev", managementLink])
        try await Self.ip(["link", "set", managementLink, "up"])
        var serverLines = ["link set lo up", "addr add \(Self.serverAddress)/32 dev lo"]
        for site in 1...sites {
            try await batch(
                router(site),
                [
                    "link set lo up", "link add lan type bridge", "addr add 10.70.\(site).1/24 dev lan",
                    "link set lan up",
                    "link add wan type veth peer name s\(site) netns \(serverNamespace)",
                    "addr add 10.71.\(site).1/30 dev wan", "link set wan up",
                    "route add default via 10.71.\(site).2",
                ]
            )
            try await sysctl(in: router(site), "net.ipv4.ip_forward=1")
            serverLines += [
                "addr add 10.71.\(site).2/30 dev s\(site)", "link set s\(site) up",
                "route add 10.70.\(site).0/24 via 10.71.\(site).1",
            ]
        }
        try await batch(serverNamespace, serverLines)
        for host in hosts {
            let name = namespace(of: host)
            try await batch(
                name,
                [
                    "link set lo up",
                    "link add eth0 type veth peer name h\(host.number) netns \(router(host.site))",
                    "addr add \(host.address)/24 dev eth0", "link set eth0 up",
                    "route add default via 10.70.\(host.site).1",
                    "link add mgmt0 type veth peer name m\(host.site)-\(host.number) netns \(managementNamespace)",
                    "addr add \(host.managementAddress)/16 dev mgmt0", "link set mgmt0 up",
                ]
            )
            try await batch(router(host.site), ["link set h\(host.number) master lan", "link set h\(host.number) up"])
            try await batch(
                managementNamespace,
                ["link set m\(host.site)-\(host.number) master br0", "link set m\(host.site)-\(host.number) up"]
            )
            // reachd asks the gateway itself (ICMP echo) whose fault a failure is, as systemd's sysctl allows.
            try await sysctl(in: name, "net.ipv4.ping_group_range=0 2147483647")
        }
    }

    /// Starts or stops the shared server (stopped: connections to it are refused).
    func setServer(running: Bool) async throws {
        try await server.set(running: running, namespace: serverNamespace)
    }

    /// Removes (or puts back) the site router's address on its LAN: the gateway goes silent
    /// (neither ARP nor ICMP answer), while every host's route still points at it.
    func setRouterSilent(_ site: Int, _ silent: Bool) async throws {
        try await Self.ip(["-n", router(site), "addr", silent ? "del" : "add", "10.70.\(site).1/24", "dev", "lan"])
    }

    /// Takes one host's link down (or up again, with its default route back).
    func setLink(of host: Host, up: Bool) async throws {
        let name = namespace(of: host)
        try await Self.ip(["-n", name, "link", "set", "eth0", up ? "up" : "down"])
        if up { try await Self.ip(["-n", name, "route", "replace", "default", "via", "10.70.\(host.site).1"]) }
    }

    /// Stops the server and removes the namespaces; safe to call twice.
    func tearDown() async {
        await server.stop()
        await removeNamespaces { $0.hasPrefix("\(prefix)-") }
    }

    /// Deletes the fleet namespaces (`rdf<pid>-…`) whose name `matching` accepts.
    private func removeNamespaces(matching: (String) -> Bool) async {
        let existing = (try? await Self.ip(["netns", "list"])) ?? ""
        for line in existing.split(separator: "\n") {
            let name = String(line.split(separator: " ").first ?? "")
            if name.hasPrefix("rdf"), matching(name) { _ = try? await Self.ip(["netns", "del", name]) }
        }
    }

    private func batch(_ namespace: String, _ lines: [String]) async throws {
        try await TestNamespace.runOffPool(
            [TestNamespace.ipPath, "-n", namespace, "-batch", "-"],
            input: lines.joined(separator: "\n") + "\n"
        )
    }

    private func sysctl(in namespace: String, _ setting: String) async throws {
        try await TestNamespace.runOffPool([TestNamespace.ipPath, "netns", "exec", namespace, "sysctl", "-qw", setting])
    }

    @discardableResult
    private static func ip(_ arguments: [String]) async throws -> String {
        try await TestNamespace.runOffPool([TestNamespace.ipPath] + arguments)
    }
}

extension Substring {
    fileprivate var nonEmpty: Substring? { isEmpty ? nil : self }
}

/// The shared server: a ``ReachTesting/StandInServer`` in the server namespace, answering `/health`.
private final class ServerProcess: Sendable {
    private let server = Mutex<StandInServer?>(nil)

    func set(running: Bool, namespace: String) async throws {
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
