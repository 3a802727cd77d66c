import Foundation
import ReachTestRigs
import Synchronization

/// The fault matrix's network: two namespaces of its own joined by a veth pair.
///
/// `host` is where reachd runs (interface `m0`, 198.51.100.2/32 and a default route via .1 "onlink",
/// the server's name `server.test` in its own `/etc/hosts`, a resolver that answers nothing);
/// `server` is where the test servers run (interface `m1`, .1 for HTTP and .3 for gRPC). The host's
/// address is a /32 so that the servers are reachable only through the default route: removing it
/// really cuts them off. Faults are `ip` commands on either side.
/// Everything is removed by name in ``tearDown()``: both namespaces (which takes the veths with
/// them) and the `/etc/netns` files `ip netns exec` mounts over `/etc`.
final class MatrixNetwork: Sendable {
    static let ipPath = TestNamespace.ipPath
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

    /// Whether namespaces can be made here: root and `ip`. Decided without starting a process, as
    /// the suite's condition is evaluated on the cooperative pool even when the suite is skipped.
    static let isAvailable: Bool = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: ipPath)

    let host: String
    let server: String

    init() {
        host = "rdm\(getpid())-host"
        server = "rdm\(getpid())-server"
    }

    private var etcDirectory: String { "/etc/netns/\(host)" }

    /// Builds both namespaces and the link between them.
    func setUp() async throws {
        await tearDown()  // leftovers of a crashed run with the same pid
        try await Self.ip(["netns", "add", host])
        try await Self.ip(["netns", "add", server])
        try FileManager.default.createDirectory(atPath: etcDirectory, withIntermediateDirectories: true)
        try "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n".write(
            toFile: "\(etcDirectory)/resolv.conf",
            atomically: false,
            encoding: .utf8
        )
        try setServerNameResolves(true)
        try await ip(in: host, "link", "set", "lo", "up")
        try await ip(in: server, "link", "set", "lo", "up")
        try await createLink()
    }

    /// The veth pair, both ends up, addressed, with the default route: what every case restores.
    func createLink() async throws {
        try await ip(in: host, "link", "add", "m0", "type", "veth", "peer", "name", "m1", "netns", server)
        try await ip(in: server, "addr", "add", "\(Self.serverAddress)/24", "dev", "m1")
        try await ip(in: server, "addr", "add", "\(Self.grpcAddress)/24", "dev", "m1")
        try await ip(in: server, "addr", "add", "\(PortalServer.address)/24", "dev", "m1")
        try await ip(in: server, "addr", "add", "\(PortalServer.checkAddress)/24", "dev", "m1")
        try await ip(in: server, "link", "set", "m1", "up")
        try await ip(in: host, "addr", "add", "\(Self.hostAddress)/32", "dev", "m0")
        try await ip(in: host, "link", "set", "m0", "up")
        try await ip(in: host, "route", "replace", "default", "via", Self.serverAddress, "dev", "m0", "onlink")
        try await ip(in: server, "route", "replace", "blackhole", "default", "table", Self.blackholeTable)
    }

    /// Starts or ends the HTTP server's blackhole: packets reach it, its answers vanish.
    func setBlackhole(_ on: Bool) async throws {
        try await ip(
            in: server,
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
        let result = try await runProgram(
            Self.ipPath,
            ["netns", "exec", server, Self.nftPath, "-f", "-"],
            input: rules
        )
        guard result.status == 0 else {
            throw CommandFailed(description: "nft -f - exited \(result.status): \(result.errors)")
        }
    }

    /// Puts back whatever a case took away: the link up on both sides, the address, the default route.
    func restoreLink() async throws {
        try await ip(in: server, "link", "set", "m1", "up")
        try await ip(in: host, "link", "set", "m0", "up")
        try await ip(in: host, "addr", "replace", "\(Self.hostAddress)/32", "dev", "m0")
        try await ip(in: host, "route", "replace", "default", "via", Self.serverAddress, "dev", "m0", "onlink")
    }

    /// Gives the link IPv6 (both ends addressed, a default route) and the server's name an AAAA
    /// record as well, while the test servers listen on IPv4 only: the name answers on one family.
    /// The AAAA record is the server's (connects are refused) or, `silent`, an address no host
    /// answers for (connects hang). `nil` takes IPv6 away again.
    func setIPv6(silent: Bool?) async throws {
        guard let silent else {
            try setServerNameResolves(true)
            try await ip(in: host, "-6", "addr", "flush", "dev", "m0", "scope", "global")
            try await ip(in: server, "-6", "addr", "flush", "dev", "m1", "scope", "global")
            return
        }
        try await ip(in: server, "-6", "addr", "replace", "\(Self.serverAddress6)/64", "dev", "m1", "nodad")
        try await ip(in: host, "-6", "addr", "replace", "\(Self.hostAddress6)/64", "dev", "m0", "nodad")
        try await ip(in: host, "-6", "route", "replace", "default", "via", Self.serverAddress6, "dev", "m0")
        try setServerNameResolves(true, ipv6: silent ? Self.silentAddress6 : Self.serverAddress6)
    }

    /// Writes `server.test` into (or out of) the host namespace's `/etc/hosts`, in place: the file
    /// is bind-mounted into reachd's mount namespace, so a new inode would not be seen. Written over
    /// the old text and then cut to length, never truncated first: a probe resolving meanwhile reads
    /// the old file or a prefix of the new one (the IPv4 line always comes first), never an empty one.
    func setServerNameResolves(_ resolves: Bool, ipv6: String? = nil) throws {
        // The portal's own name (its certificate's, where its RFC 8908 API answers) always resolves.
        let text =
            "127.0.0.1 localhost\n\(PortalServer.address) portal.test\n"
            + (resolves ? "\(Self.serverAddress) \(Self.serverName)\n" : "")
            + (resolves ? ipv6.map { "\($0) \(Self.serverName)\n" } ?? "" : "")
        let path = "\(etcDirectory)/hosts"
        guard let file = FileHandle(forWritingAtPath: path) else {
            return try text.write(toFile: path, atomically: false, encoding: .utf8)
        }
        defer { try? file.close() }
        try file.write(contentsOf: Data(text.utf8))
        try file.truncate(atOffset: UInt64(text.utf8.count))
    }

    /// Removes both namespaces and the `/etc/netns` files; safe to call twice.
    func tearDown() async {
        _ = try? await runProgram(Self.ipPath, ["netns", "del", host])
        _ = try? await runProgram(Self.ipPath, ["netns", "del", server])
        try? FileManager.default.removeItem(atPath: etcDirectory)
    }

    /// `ip -n NAMESPACE ARGS…`.
    func ip(in namespace: String, _ arguments: String...) async throws {
        try await Self.ip(["-n", namespace] + arguments)
    }

    /// Many `ip` commands in one process, for storms.
    func ipBatch(in namespace: String, _ lines: [String]) async throws {
        try await Self.ip(["-n", namespace, "-force", "-batch", "-"], input: lines.joined(separator: "\n") + "\n")
    }

    struct CommandFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// `ip ARGS…`, throwing with its error output when it fails.
    static func ip(_ arguments: [String], input: String? = nil) async throws {
        let result = try await runProgram(ipPath, arguments, input: input)
        guard result.status == 0 else {
            throw CommandFailed(
                description: "ip \(arguments.joined(separator: " ")) exited \(result.status): \(result.errors)"
            )
        }
    }
}
