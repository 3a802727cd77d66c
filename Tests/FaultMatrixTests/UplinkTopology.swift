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
/// is removed in ``tearDown()``: the processes, the four namespaces (which take the veths with
/// them), the `/etc/netns` directory `ip netns exec` mounts over `/etc`, and the files.
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
        MatrixNetwork.isAvailable && FileManager.default.isExecutableFile(atPath: dnsmasqPath)

    /// The namespaces: the host (where reachd runs), the routers, the server.
    let host: String
    let routerA: String
    let routerB: String
    let server: String
    /// The topology's files: dnsmasq's configuration, pid and lease files, its log.
    let directory: TemporaryDirectory
    /// The HTTP server, and dnsmasq's pid (a daemon, not a child of the test: see ``setDNS(running:)``).
    private let processes = Mutex<(http: FaultServer?, dns: Int32?)>((nil, nil))
    private static let instances = Atomic<Int>(0)

    /// Names the namespaces after the test process (so `scripts/test-leftovers` can tell a
    /// crashed run's) and a counter (so that topologies of one process do not meet).
    init() throws {
        let prefix = "rdu\(getpid())-\(Self.instances.add(1, ordering: .relaxed).newValue)"
        host = "\(prefix)-host"
        routerA = "\(prefix)-ra"
        routerB = "\(prefix)-rb"
        server = "\(prefix)-srv"
        directory = try TemporaryDirectory("uplinks")
    }

    func router(_ uplink: Uplink) -> String { uplink == .a ? routerA : routerB }

    private var namespaces: [String] { [host, routerA, routerB, server] }
    private var etcDirectory: String { "/etc/netns/\(host)" }

    /// Builds the namespaces, links, addresses and routes, and starts the HTTP server (answering
    /// `ok`) and the resolver. On failure, whatever was built is removed again.
    func setUp() async throws {
        await tearDown()  // leftovers of a crashed run with the same name
        do {
            try await build()
            let http = try FaultServer(namespace: server, dualStack: true)
            processes.withLock { $0.http = http }
            try await http.waitUntilReady()
            try await setDNS(running: true)
        } catch {
            await tearDown()
            throw error
        }
    }

    private func build() async throws {
        for namespace in namespaces {
            try await MatrixNetwork.ip(["netns", "add", namespace])
            try await ip(in: namespace, "link", "set", "lo", "up")
        }
        try FileManager.default.createDirectory(atPath: etcDirectory, withIntermediateDirectories: true)
        try "nameserver \(Self.resolverAddress)\noptions timeout:1 attempts:1\n".write(
            toFile: "\(etcDirectory)/resolv.conf",
            atomically: false,
            encoding: .utf8
        )
        try "127.0.0.1 localhost\n::1 localhost\n".write(
            toFile: "\(etcDirectory)/hosts",
            atomically: false,
            encoding: .utf8
        )
        try await sysctl(in: host, "net.ipv4.conf.all.rp_filter=2", "net.ipv4.conf.default.rp_filter=2")
        try await setPingSockets(allowed: true)
        for address in [Self.serverAddress + "/32", Self.resolverAddress + "/32"] {
            try await ip(in: server, "addr", "add", address, "dev", "lo")
        }
        for address in [Self.serverAddress6 + "/128", Self.resolverAddress6 + "/128"] {
            try await ip(in: server, "-6", "addr", "add", address, "dev", "lo")
        }
        try await ip(in: server, "route", "add", "blackhole", "default", "table", Self.blackholeTable)
        try await ip(in: server, "-6", "route", "add", "blackhole", "default", "table", Self.blackholeTable)
        for uplink in Uplink.allCases {
            try await buildUplink(uplink)
        }
        try await setDefaultRoute(via: .a)
    }

    private func buildUplink(_ uplink: Uplink) async throws {
        let router = router(uplink)
        try await sysctl(in: router, "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1")
        // Host ↔ router.
        try await ip(
            in: host,
            "link",
            "add",
            uplink.interface,
            "type",
            "veth",
            "peer",
            "name",
            uplink.routerLAN,
            "netns",
            router
        )
        try await ip(in: host, "addr", "add", "\(uplink.hostAddress)/24", "dev", uplink.interface)
        try await ip(in: host, "-6", "addr", "add", "\(uplink.hostAddress6)/64", "dev", uplink.interface, "nodad")
        try await ip(in: host, "link", "set", uplink.interface, "up")
        try await addGatewayAddresses(uplink)
        try await ip(in: router, "link", "set", uplink.routerLAN, "up")
        // Router ↔ server.
        try await ip(
            in: router,
            "link",
            "add",
            uplink.routerWAN,
            "type",
            "veth",
            "peer",
            "name",
            uplink.serverInterface,
            "netns",
            server
        )
        try await ip(in: server, "addr", "add", "\(uplink.wanServer)/24", "dev", uplink.serverInterface)
        try await ip(in: server, "-6", "addr", "add", "\(uplink.wanServer6)/64", "dev", uplink.serverInterface, "nodad")
        try await ip(in: server, "link", "set", uplink.serverInterface, "up")
        // The router forwards to the server; the server answers each uplink's host addresses back
        // through that uplink's router.
        try await setUpstream(uplink, up: true)
        // The routers forward what they can and drop the rest without a word.
        try await ip(in: router, "route", "add", "blackhole", "default", "metric", "4000")
        try await ip(in: router, "-6", "route", "add", "blackhole", "default", "metric", "4000")
        // The host: this uplink's default route in its own table, chosen by the source address.
        try await ip(
            in: host,
            "route",
            "add",
            "default",
            "via",
            uplink.gateway,
            "dev",
            uplink.interface,
            "table",
            uplink.table
        )
        try await ip(
            in: host,
            "-6",
            "route",
            "add",
            "default",
            "via",
            uplink.gateway6,
            "dev",
            uplink.interface,
            "table",
            uplink.table
        )
        try await ip(
            in: host,
            "rule",
            "add",
            "from",
            uplink.hostAddress,
            "lookup",
            uplink.table,
            "pref",
            "10\(uplink.number)"
        )
        try await ip(
            in: host,
            "-6",
            "rule",
            "add",
            "from",
            uplink.hostAddress6,
            "lookup",
            uplink.table,
            "pref",
            "10\(uplink.number)"
        )
    }

    private func addGatewayAddresses(_ uplink: Uplink) async throws {
        let router = router(uplink)
        try await ip(in: router, "addr", "replace", "\(uplink.gateway)/24", "dev", uplink.routerLAN)
        try await ip(in: router, "-6", "addr", "replace", "\(uplink.gateway6)/64", "dev", uplink.routerLAN, "nodad")
    }

    // MARK: Faults

    /// Removes (or puts back) the router's addresses on the host's link: the gateway goes silent
    /// (neither ARP, neighbour discovery nor ICMP answer), while the host's routes still point at it.
    func setGatewaySilent(_ uplink: Uplink, _ silent: Bool) async throws {
        guard silent else { return try await addGatewayAddresses(uplink) }
        let router = router(uplink)
        try await ip(in: router, "addr", "del", "\(uplink.gateway)/24", "dev", uplink.routerLAN)
        try await ip(in: router, "-6", "addr", "del", "\(uplink.gateway6)/64", "dev", uplink.routerLAN)
    }

    /// Takes the router's link to the server down (or up): the gateway answers, nothing beyond it
    /// does (the router's blackhole default swallows it), as when the line behind a home router dies.
    func setUpstream(_ uplink: Uplink, up: Bool) async throws {
        let router = router(uplink)
        guard up else { return try await ip(in: router, "link", "set", uplink.routerWAN, "down") }
        // Taken down, the link lost its IPv6 addresses and its routes: all of it again.
        try await ip(in: router, "addr", "replace", "\(uplink.wanRouter)/24", "dev", uplink.routerWAN)
        try await ip(in: router, "-6", "addr", "replace", "\(uplink.wanRouter6)/64", "dev", uplink.routerWAN, "nodad")
        try await ip(in: router, "link", "set", uplink.routerWAN, "up")
        try await ip(in: router, "route", "replace", "10.64.0.0/24", "via", uplink.wanServer, "dev", uplink.routerWAN)
        try await ip(
            in: router,
            "-6",
            "route",
            "replace",
            "fd64::/64",
            "via",
            uplink.wanServer6,
            "dev",
            uplink.routerWAN
        )
        try await ip(
            in: server,
            "route",
            "replace",
            "10.64.\(uplink.number).0/24",
            "via",
            uplink.wanRouter,
            "dev",
            uplink.serverInterface
        )
        try await ip(
            in: server,
            "-6",
            "route",
            "replace",
            "fd64:\(uplink.number)::/64",
            "via",
            uplink.wanRouter6,
            "dev",
            uplink.serverInterface
        )
    }

    /// Breaks (or mends) only this router's path to the HTTP server's addresses: the router drops
    /// what goes to them, while the resolver and the other router's path are untouched.
    func setServerPath(through uplink: Uplink, broken: Bool) async throws {
        let router = router(uplink)
        let verb = broken ? "add" : "del"
        try await ip(in: router, "route", verb, "blackhole", "\(Self.serverAddress)/32")
        try await ip(in: router, "-6", "route", verb, "blackhole", "\(Self.serverAddress6)/128")
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
            try await ip(
                in: host,
                family,
                "route",
                "replace",
                "default",
                "via",
                gateway,
                "dev",
                uplink.interface,
                "metric",
                "50"
            )
            try? await ip(in: host, family, "route", "del", "default", "dev", uplink.interface, "metric", "200")
            try? await ip(in: host, family, "route", "del", "default", "dev", other.interface, "metric", "100")
            try await ip(
                in: host,
                family,
                "route",
                "replace",
                "default",
                "via",
                otherGateway,
                "dev",
                other.interface,
                "metric",
                "200"
            )
            try await ip(
                in: host,
                family,
                "route",
                "replace",
                "default",
                "via",
                gateway,
                "dev",
                uplink.interface,
                "metric",
                "100"
            )
            try await ip(in: host, family, "route", "del", "default", "dev", uplink.interface, "metric", "50")
        }
    }

    /// Sends the HTTP server's answers (both families) into a blackhole, or lets them out again:
    /// SYNs arrive, nothing comes back. The resolver is untouched.
    func setServerBlackholed(_ blackholed: Bool) async throws {
        let verb = blackholed ? "add" : "del"
        try await ip(in: server, "rule", verb, "from", Self.serverAddress, "lookup", Self.blackholeTable, "pref", "100")
        try await ip(
            in: server,
            "-6",
            "rule",
            verb,
            "from",
            Self.serverAddress6,
            "lookup",
            Self.blackholeTable,
            "pref",
            "100"
        )
    }

    /// Breaks (or mends) IPv6 between the host and the server, silently: everything the server
    /// namespace sends over IPv6 is dropped, while IPv4 (the resolver included, which still gives
    /// AAAA records) works.
    func setIPv6Broken(_ broken: Bool) async throws {
        try await ip(in: server, "-6", "rule", broken ? "add" : "del", "lookup", Self.blackholeTable, "pref", "90")
    }

    /// The HTTP server in the server namespace: `set("ok")`, `set("503")`, `set("close")` (refused),
    /// `set("open")` and the rest of ``FaultServer``'s commands.
    var http: FaultServer {
        get throws {
            guard let http = processes.withLock({ $0.http }) else {
                throw MatrixNetwork.CommandFailed(description: "the topology is not set up")
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
        let command =
            "exec \(MatrixNetwork.ipPath) netns exec \(server) \(Self.dnsmasqPath) --conf-file=\(directory)/dnsmasq.conf </dev/null >/dev/null 2>\(directory)/dnsmasq.stderr"
        let started = try await runProgram("/bin/sh", ["-c", command])
        let pid = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard started.status == 0, let pid else {
            let errors =
                (FileManager.default.contents(atPath: "\(directory)/dnsmasq.stderr")).map {
                    String(decoding: $0, as: UTF8.self)
                } ?? ""
            throw MatrixNetwork.CommandFailed(description: "dnsmasq exited \(started.status): \(errors)")
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
    func resolves(from namespace: String? = nil) async -> Bool {
        let query = """
            import socket, sys
            name = b''.join(bytes([len(p)]) + p.encode() for p in sys.argv[1].split('.'))
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(1)
            s.sendto(b'\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00' + name + b'\\x00\\x00\\x01\\x00\\x01', (sys.argv[2], 53))
            s.recv(512)
            """
        let result = try? await runProgram(
            MatrixNetwork.ipPath,
            [
                "netns", "exec", namespace ?? host, "/usr/bin/env", "python3", "-c", query, Self.serverName,
                Self.resolverAddress,
            ]
        )
        return result?.status == 0
    }

    /// Opens the host namespace's unprivileged ICMP echo sockets to every group, as systemd's
    /// `50-default.conf` does (`net.ipv4.ping_group_range = 0 2147483647`), or closes them as a new
    /// namespace starts (`1 0`: nobody; even root gets `EACCES`).
    func setPingSockets(allowed: Bool) async throws {
        try await sysctl(in: host, "net.ipv4.ping_group_range=\(allowed ? "0 2147483647" : "1 0")")
    }

    // MARK: Running things

    /// The arguments to `ip` (``MatrixNetwork/ipPath``) that run `command` in the host namespace
    /// (`ip netns exec` execs: the process is the command itself, with the host's `/etc` files).
    func inHost(_ command: [String]) -> [String] { ["netns", "exec", host] + command }

    /// `ip -n NAMESPACE ARGS…`.
    func ip(in namespace: String, _ arguments: String...) async throws {
        try await MatrixNetwork.ip(["-n", namespace] + arguments)
    }

    private func sysctl(in namespace: String, _ settings: String...) async throws {
        let result = try await runProgram(
            MatrixNetwork.ipPath,
            ["netns", "exec", namespace, "/usr/sbin/sysctl", "-q", "-w"] + settings
        )
        guard result.status == 0 else {
            throw MatrixNetwork.CommandFailed(
                description:
                    "sysctl \(settings.joined(separator: " ")) in \(namespace) exited \(result.status): \(result.errors)"
            )
        }
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
        for namespace in namespaces {
            _ = try? await runProgram(MatrixNetwork.ipPath, ["netns", "del", namespace])
        }
        try? FileManager.default.removeItem(atPath: etcDirectory)
    }
}
