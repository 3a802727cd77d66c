import Foundation
import ReachTestRigs
import ReachTesting
import Synchronization

/// A host with two uplinks, built of network namespaces of the test's own, for the questions
/// "whose fault is it" and "which uplink still reaches the server":
///
/// ```
///            ua 10.64.1.2 ── la 10.64.1.1  [router A]  wa 10.64.3.1 ── sa 10.64.3.2
///  [host]                                                                         [server]
///            ub 10.64.2.2 ── lb 10.64.2.1  [router B]  wb 10.64.4.1 ── sb 10.64.4.2
/// ```
///
/// Every link has IPv6 too (`fd64:N::` in place of `10.64.N.`). The server namespace holds, on its
/// loopback, the HTTP server's address ``serverAddress`` (a ``FaultServer`` on both families, port
/// ``FaultServer/port``) and the resolver's ``resolverAddress`` (a real `dnsmasq` answering
/// ``serverName`` with both addresses). The routers route (no NAT) with forwarding on; each has a
/// blackhole default, so what it cannot forward vanishes silently, as behind a dead modem.
///
/// The host (where reachd runs, ``host``) has policy routing as a multi-homed box does: a default
/// route per uplink in its own table (101, 102) chosen by the source address, and in the main
/// table a default via A (metric 100) and one via B (metric 200); `rp_filter` loose, as systemd
/// sets it; `ping_group_range` open as systemd's sysctl sets it (``setPingSockets(allowed:)``);
/// its own `/etc/resolv.conf` (the resolver, 1 s, one attempt) and `/etc/hosts` (localhost only).
///
/// The faults are methods, each undone by calling it again with the opposite argument. Everything
/// is removed in ``tearDown()``: the processes, the four ``TestNamespace``s (with their veths and
/// their `/etc/netns` files), and the files.
final class UplinkTopology: Sendable {
    /// The two uplinks of the host.
    enum Uplink: String, CaseIterable, Sendable {
        case a, b

        /// The host's interface on this uplink.
        var interface: String { "u\(rawValue)" }
        /// The router's interface towards the host, and its interface towards the server.
        var routerLAN: String { "l\(rawValue)" }
        var routerWAN: String { "w\(rawValue)" }
        /// The server's interface towards this router.
        var serverInterface: String { "s\(rawValue)" }
        fileprivate var number: Int { self == .a ? 1 : 2 }

        /// The router's address on the host's link: the host's gateway on this uplink.
        var gateway: String { "10.64.\(number).1" }
        var gateway6: String { "fd64:\(number)::1" }
        /// The host's address on this uplink.
        var hostAddress: String { "10.64.\(number).2" }
        var hostAddress6: String { "fd64:\(number)::2" }
        /// The policy-routing table holding this uplink's default route.
        var table: String { "10\(number)" }
        /// The router–server link's addresses (router .1, server .2).
        fileprivate var wanRouter: String { "10.64.\(number + 2).1" }
        fileprivate var wanRouter6: String { "fd64:\(number + 2)::1" }
        fileprivate var wanServer: String { "10.64.\(number + 2).2" }
        fileprivate var wanServer6: String { "fd64:\(number + 2)::2" }
    }

    /// The HTTP server's address in the server namespace (on its loopback, reached through either router).
    static let serverAddress = "10.64.0.1"
    static let serverAddress6 = "fd64::1"
    /// The resolver's (dnsmasq's) address in the server namespace.
    static let resolverAddress = "10.64.0.53"
    static let resolverAddress6 = "fd64::53"
    /// The name the resolver answers with ``serverAddress`` and ``serverAddress6``.
    static let serverName = "server.uplinks.test"
    /// The HTTP target's URL by name, and by address.
    static let serverURL = "http://\(serverName):\(FaultServer.port)/health"
    static let serverAddressURL = "http://\(serverAddress):\(FaultServer.port)/health"
    /// The server namespace's table of blackholes (both families), for ``setServerBlackholed(_:)`` and ``setIPv6Broken(_:)``.
    private static let blackholeTable = "100"
    static let dnsmasqPath =
        ["/usr/sbin/dnsmasq", "/sbin/dnsmasq"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "dnsmasq"

    /// Whether the topology can be built here: root, `ip` and `dnsmasq` (`scripts/test` installs it).
    static let isAvailable: Bool =
        TestNamespace.isAvailable && FileManager.default.isExecutableFile(atPath: dnsmasqPath)

    /// The namespaces: the host (where reachd runs), the routers, the server.
    let host: TestNamespace
    let routerA: TestNamespace
    let routerB: TestNamespace
    let server: TestNamespace
    /// The topology's files: dnsmasq's configuration, pid and lease files, its log.
    let directory: TemporaryDirectory
    /// The HTTP server, and dnsmasq's pid (a daemon, not a child of the test: see ``setDNS(running:)``).
    private let processes = Mutex<(http: FaultServer?, dns: Int32?)>((nil, nil))

    private init(namespaces: [TestNamespace], directory: TemporaryDirectory) {
        (host, routerA, routerB, server) = (namespaces[0], namespaces[1], namespaces[2], namespaces[3])
        self.directory = directory
    }

    /// Builds the namespaces, links, addresses and routes, and starts the HTTP server (answering
    /// `ok`) and the resolver. On failure, whatever was built is removed again.
    static func make() async throws -> UplinkTopology {
        let directory = try TemporaryDirectory("uplinks")
        let namespaces = try await TestNamespace.make(["uplinks-host", "uplinks-ra", "uplinks-rb", "uplinks-srv"])
        let topology = UplinkTopology(namespaces: namespaces, directory: directory)
        do {
            try await topology.build()
            let http = try FaultServer(namespace: topology.server, dualStack: true)
            topology.processes.withLock { $0.http = http }
            try await http.waitUntilReady()
            try await topology.setDNS(running: true)
        } catch {
            await topology.tearDown()
            throw error
        }
        return topology
    }

    func router(_ uplink: Uplink) -> TestNamespace { uplink == .a ? routerA : routerB }

    private var namespaces: [TestNamespace] { [host, routerA, routerB, server] }

    private func build() async throws {
        try host.writeEtc("resolv.conf", "nameserver \(Self.resolverAddress)\noptions timeout:1 attempts:1\n")
        try host.writeEtc("hosts", "127.0.0.1 localhost\n::1 localhost\n")
        try await host.sysctl("net.ipv4.conf.all.rp_filter=2", "net.ipv4.conf.default.rp_filter=2")
        try await setPingSockets(allowed: true)
        try await server.ipBatch([
            "addr add \(Self.serverAddress)/32 dev lo", "addr add \(Self.resolverAddress)/32 dev lo",
            "addr add \(Self.serverAddress6)/128 dev lo", "addr add \(Self.resolverAddress6)/128 dev lo",
            "route add blackhole default table \(Self.blackholeTable)",
            "route add blackhole ::/0 table \(Self.blackholeTable)",
        ])
        for uplink in Uplink.allCases {
            try await buildUplink(uplink)
        }
        try await setDefaultRoute(via: .a)
    }

    private func buildUplink(_ uplink: Uplink) async throws {
        let router = router(uplink)
        try await router.sysctl("net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1")
        // Host ↔ router.
        try await host.addVeth(uplink.interface, peer: uplink.routerLAN, in: router)
        try await host.ipBatch([
            "addr add \(uplink.hostAddress)/24 dev \(uplink.interface)",
            "addr add \(uplink.hostAddress6)/64 dev \(uplink.interface) nodad", "link set \(uplink.interface) up",
        ])
        try await addGatewayAddresses(uplink)
        try await router.ip("link", "set", uplink.routerLAN, "up")
        // Router ↔ server.
        try await router.addVeth(uplink.routerWAN, peer: uplink.serverInterface, in: server)
        try await server.ipBatch([
            "addr add \(uplink.wanServer)/24 dev \(uplink.serverInterface)",
            "addr add \(uplink.wanServer6)/64 dev \(uplink.serverInterface) nodad",
            "link set \(uplink.serverInterface) up",
        ])
        // The router forwards to the server; the server answers each uplink's host addresses back
        // through that uplink's router.
        try await setUpstream(uplink, up: true)
        // The routers forward what they can and drop the rest without a word.
        try await router.ipBatch(["route add blackhole default metric 4000", "route add blackhole ::/0 metric 4000"])
        // The host: this uplink's default route in its own table, chosen by the source address.
        try await host.ipBatch([
            "route add default via \(uplink.gateway) dev \(uplink.interface) table \(uplink.table)",
            "route add default via \(uplink.gateway6) dev \(uplink.interface) table \(uplink.table)",
            "rule add from \(uplink.hostAddress) lookup \(uplink.table) pref 10\(uplink.number)",
        ])
        // (A rule's family is not told by its address.)
        try await host.ipBatch(
            ["rule add from \(uplink.hostAddress6) lookup \(uplink.table) pref 10\(uplink.number)"],
            options: ["-6"]
        )
    }

    private func addGatewayAddresses(_ uplink: Uplink) async throws {
        try await router(uplink).ipBatch([
            "addr replace \(uplink.gateway)/24 dev \(uplink.routerLAN)",
            "addr replace \(uplink.gateway6)/64 dev \(uplink.routerLAN) nodad",
        ])
    }

    // MARK: Faults

    /// Removes (or puts back) the router's addresses on the host's link: the gateway goes silent
    /// (neither ARP, neighbour discovery nor ICMP answer), while the host's routes still point at it.
    func setGatewaySilent(_ uplink: Uplink, _ silent: Bool) async throws {
        guard silent else { return try await addGatewayAddresses(uplink) }
        try await router(uplink).ipBatch([
            "addr del \(uplink.gateway)/24 dev \(uplink.routerLAN)",
            "addr del \(uplink.gateway6)/64 dev \(uplink.routerLAN)",
        ])
    }

    /// Takes the router's link to the server down (or up): the gateway answers, nothing beyond it
    /// does (the router's blackhole default swallows it), as when the line behind a home router dies.
    func setUpstream(_ uplink: Uplink, up: Bool) async throws {
        let router = router(uplink)
        guard up else {
            try await router.ip("link", "set", uplink.routerWAN, "down")
            return
        }
        // Taken down, the link lost its IPv6 addresses and its routes: all of it again.
        try await router.ipBatch([
            "addr replace \(uplink.wanRouter)/24 dev \(uplink.routerWAN)",
            "addr replace \(uplink.wanRouter6)/64 dev \(uplink.routerWAN) nodad", "link set \(uplink.routerWAN) up",
            "route replace 10.64.0.0/24 via \(uplink.wanServer) dev \(uplink.routerWAN)",
            "route replace fd64::/64 via \(uplink.wanServer6) dev \(uplink.routerWAN)",
        ])
        try await server.ipBatch([
            "route replace 10.64.\(uplink.number).0/24 via \(uplink.wanRouter) dev \(uplink.serverInterface)",
            "route replace fd64:\(uplink.number)::/64 via \(uplink.wanRouter6) dev \(uplink.serverInterface)",
        ])
    }

    /// Breaks (or mends) only this router's path to the HTTP server's addresses: the router drops
    /// what goes to them, while the resolver and the other router's path are untouched.
    func setServerPath(through uplink: Uplink, broken: Bool) async throws {
        let verb = broken ? "add" : "del"
        try await router(uplink).ipBatch([
            "route \(verb) blackhole \(Self.serverAddress)/32", "route \(verb) blackhole \(Self.serverAddress6)/128",
        ])
    }

    /// Makes the host's main-table default route the one via `uplink` (metric 100), the other
    /// second (metric 200): where a program's traffic goes unless it binds to an interface.
    func setDefaultRoute(via uplink: Uplink) async throws {
        // In an order that leaves a default route in place throughout: a moment without one would
        // be a real no_route.
        let other: Uplink = uplink == .a ? .b : .a
        for family in ["-4", "-6"] {
            let (gateway, otherGateway) =
                family == "-4" ? (uplink.gateway, other.gateway) : (uplink.gateway6, other.gateway6)
            try await host.ipBatch(
                ["route replace default via \(gateway) dev \(uplink.interface) metric 50"],
                options: [family]
            )
            _ = try? await host.ip(family, "route", "del", "default", "dev", uplink.interface, "metric", "200")
            _ = try? await host.ip(family, "route", "del", "default", "dev", other.interface, "metric", "100")
            try await host.ipBatch(
                [
                    "route replace default via \(otherGateway) dev \(other.interface) metric 200",
                    "route replace default via \(gateway) dev \(uplink.interface) metric 100",
                ],
                options: [family]
            )
            try await host.ip(family, "route", "del", "default", "dev", uplink.interface, "metric", "50")
        }
    }

    /// Sends the HTTP server's answers (both families) into a blackhole, or lets them out again:
    /// SYNs arrive, nothing comes back. The resolver is untouched.
    func setServerBlackholed(_ blackholed: Bool) async throws {
        let verb = blackholed ? "add" : "del"
        for (family, address) in [("-4", Self.serverAddress), ("-6", Self.serverAddress6)] {
            try await server.ip(family, "rule", verb, "from", address, "lookup", Self.blackholeTable, "pref", "100")
        }
    }

    /// Breaks (or mends) IPv6 between the host and the server, silently: everything the server
    /// namespace sends over IPv6 is dropped, while IPv4 (the resolver included, which still gives
    /// AAAA records) works.
    func setIPv6Broken(_ broken: Bool) async throws {
        try await server.ip("-6", "rule", broken ? "add" : "del", "lookup", Self.blackholeTable, "pref", "90")
    }

    /// The HTTP server in the server namespace: `set("ok")`, `set("503")`, `set("close")` (refused),
    /// `set("open")` and the rest of ``FaultServer``'s commands.
    var http: FaultServer {
        get throws {
            guard let http = processes.withLock({ $0.http }) else {
                throw ChildProcess.Failed(description: "the uplink topology is torn down")
            }
            return http
        }
    }

    /// Starts or stops the resolver (dnsmasq, in the server namespace, with its own configuration,
    /// pid and lease files in ``directory``; it reads nothing of the host's `/etc`). Stopped,
    /// queries to it are refused (ICMP port unreachable).
    func setDNS(running: Bool) async throws {
        let old = processes.withLock { processes in
            defer { processes.dns = nil }
            return processes.dns
        }
        if let old { await Self.stop(old) }
        guard running else { return }
        let pidFile = "\(directory)/dnsmasq.pid"
        try? FileManager.default.removeItem(atPath: pidFile)
        let configuration = """
            no-resolv
            no-hosts
            no-poll
            bind-interfaces
            listen-address=\(Self.resolverAddress)
            listen-address=\(Self.resolverAddress6)
            host-record=\(Self.serverName),\(Self.serverAddress),\(Self.serverAddress6)
            pid-file=\(pidFile)
            dhcp-leasefile=\(directory)/dnsmasq.leases
            user=root
            group=root
            log-facility=\(directory)/dnsmasq.log

            """
        try configuration.write(toFile: "\(directory)/dnsmasq.conf", atomically: true, encoding: .utf8)
        // As a daemon, not a child of the test: with dnsmasq a child of the test process, the
        // programs the test ran after it were seen never to be reaped (their runs hung). dnsmasq's
        // parent exits once the daemon is ready (or has failed, saying why); the daemon is handed
        // no pipe of ours, so nothing waits on it.
        let dnsmasq = server.command([Self.dnsmasqPath, "--conf-file=\(directory)/dnsmasq.conf"])
        let command = "exec \(dnsmasq.joined(separator: " ")) </dev/null >/dev/null 2>\(directory)/dnsmasq.stderr"
        let started = try await runProgram("/bin/sh", ["-c", command])
        let pid = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard started.status == 0, let pid else {
            let errors =
                (FileManager.default.contents(atPath: "\(directory)/dnsmasq.stderr")).map {
                    String(decoding: $0, as: UTF8.self)
                } ?? ""
            throw TestNamespace.CommandFailed(command: dnsmasq, status: started.status, output: errors)
        }
        processes.withLock { $0.dns = pid }
    }

    /// Stops the daemon `pid` (SIGTERM, then SIGKILL after 5 s) and waits until it is gone.
    private static func stop(_ pid: Int32) async {
        kill(pid, SIGTERM)
        if (try? await waitUntil("process \(pid) to stop", timeout: .seconds(5)) { kill(pid, 0) != 0 }) == nil {
            kill(pid, SIGKILL)
            try? await waitUntil("process \(pid) to go") { kill(pid, 0) != 0 }
        }
    }

    /// Whether the resolver answers a query for ``serverName`` sent to it from `namespace` (the
    /// host's by default, where it goes through the routers; a hand-made query, as only the host
    /// namespace's `/etc/resolv.conf` is ours).
    func resolves(from namespace: TestNamespace? = nil) async -> Bool {
        let query = """
            import socket, sys
            name = b''.join(bytes([len(p)]) + p.encode() for p in sys.argv[1].split('.'))
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(1)
            s.sendto(b'\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00' + name + b'\\x00\\x00\\x01\\x00\\x01', (sys.argv[2], 53))
            s.recv(512)
            """
        let result = try? await (namespace ?? host).run([
            "/usr/bin/env", "python3", "-c", query, Self.serverName, Self.resolverAddress,
        ])
        return result?.status == 0
    }

    /// Opens the host namespace's unprivileged ICMP echo sockets to every group, as systemd's
    /// `50-default.conf` does (`net.ipv4.ping_group_range = 0 2147483647`), or closes them as a new
    /// namespace starts (`1 0`: nobody; even root gets `EACCES`).
    func setPingSockets(allowed: Bool) async throws {
        try await host.sysctl("net.ipv4.ping_group_range=\(allowed ? "0 2147483647" : "1 0")")
    }

    /// Stops the processes and removes the namespaces, the `/etc/netns` directory and the files;
    /// safe to call twice.
    func tearDown() async {
        let (http, dns) = processes.withLock { processes in
            defer { processes = (nil, nil) }
            return processes
        }
        await http?.stop()
        if let dns { await Self.stop(dns) }
        for namespace in namespaces { await namespace.delete() }
    }
}
