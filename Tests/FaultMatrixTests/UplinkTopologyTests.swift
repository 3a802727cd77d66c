import Foundation
import ReachTestRigs
import Testing

/// The uplink topology does what its faults say, seen from the host namespace with curl and
/// ICMP echo sockets: the tests built on it can trust that a fault is the fault it names.
@Suite(.serialized, .enabled(if: UplinkTopology.isAvailable, "needs root (network namespaces) and dnsmasq"))
struct UplinkTopologyTests {
    @Test(.timeLimit(.minutes(3)))
    func everyFaultBreaksWhatItNamesAndNothingElse() async throws {
        let topology = try await UplinkTopology.make()
        do {
            try await check(topology)
        } catch {
            Issue.record("\(error)")
        }
        await topology.tearDown()
    }

    private func check(_ topology: UplinkTopology) async throws {
        typealias T = UplinkTopology
        // All well: the name resolves, the server answers on both families, out of both uplinks, the gateways echo.
        #expect(await fetch(topology, T.serverURL) == "ok")
        #expect(await fetch(topology, T.serverURL, "-6") == "ok")
        #expect(await fetch(topology, T.serverURL, "--interface", "if!ub") == "ok")
        #expect(await fetch(topology, T.serverURL, "-6", "--interface", "if!ub") == "ok")
        #expect(await echo(topology, .a) == "answered")
        #expect(await echo(topology, .b) == "answered")

        try await topology.setGatewaySilent(.a, true)
        #expect(await echo(topology, .a) == "silent")
        #expect(await fetch(topology, T.serverAddressURL) == nil)
        #expect(await fetch(topology, T.serverAddressURL, "--interface", "if!ub") == "ok")
        try await topology.setGatewaySilent(.a, false)
        #expect(await fetch(topology, T.serverAddressURL) == "ok")

        try await topology.setUpstream(.a, up: false)
        #expect(await echo(topology, .a) == "answered")
        #expect(await fetch(topology, T.serverAddressURL) == nil)
        #expect(await topology.resolves() == false)
        #expect(await fetch(topology, T.serverAddressURL, "--interface", "if!ub") == "ok")
        try await topology.setUpstream(.a, up: true)
        #expect(await fetch(topology, T.serverURL) == "ok")
        #expect(await fetch(topology, T.serverURL, "-6") == "ok")

        try await topology.setServerPath(through: .a, broken: true)
        #expect(await fetch(topology, T.serverAddressURL) == nil)
        #expect(await topology.resolves())
        #expect(await fetch(topology, T.serverAddressURL, "--interface", "if!ub") == "ok")
        try await topology.setDefaultRoute(via: .b)
        #expect(await fetch(topology, T.serverURL) == "ok")
        try await topology.setDefaultRoute(via: .a)
        try await topology.setServerPath(through: .a, broken: false)
        #expect(await fetch(topology, T.serverURL) == "ok")

        try await topology.http.set("503")
        #expect(await fetch(topology, T.serverURL) == "503")
        try await topology.http.set("close")
        #expect(await fetch(topology, T.serverURL) == "refused")
        try await topology.http.set("open")
        try await topology.http.set("ok")

        try await topology.setServerBlackholed(true)
        #expect(await fetch(topology, T.serverAddressURL) == nil)
        #expect(await topology.resolves())
        try await topology.setServerBlackholed(false)

        try await topology.setDNS(running: false)
        #expect(await topology.resolves() == false)
        #expect(await fetch(topology, T.serverAddressURL) == "ok")
        try await topology.setDNS(running: true)
        #expect(await fetch(topology, T.serverURL) == "ok")

        try await topology.setIPv6Broken(true)
        #expect(await fetch(topology, T.serverURL, "-6") == nil)
        #expect(await fetch(topology, T.serverURL, "-4") == "ok")
        try await topology.setIPv6Broken(false)
        #expect(await fetch(topology, T.serverURL, "-6") == "ok")

        try await topology.setPingSockets(allowed: false)
        #expect(await echo(topology, .a) == "EACCES")
        try await topology.setPingSockets(allowed: true)
    }

    /// curl from the host namespace: the body (`ok`), the status when not 200, `refused`, or nil
    /// when nothing answered within 2 s.
    private func fetch(_ topology: UplinkTopology, _ url: String, _ options: String...) async -> String? {
        let curl = ["/usr/bin/curl", "-s", "-m", "2", "-w", " %{http_code}"] + options + [url]
        guard let result = try? await topology.host.run(curl) else { return nil }
        switch result.status {
        case 0:
            return result.output.hasSuffix(" 200") ? String(result.output.dropLast(4)) : String(result.output.suffix(3))
        case 7: return "refused"
        default: return nil
        }
    }

    /// One ICMP echo to the uplink's gateway from the host namespace over an unprivileged ping
    /// socket: `answered`, `silent` (nothing within 1 s) or the errno's name.
    private func echo(_ topology: UplinkTopology, _ uplink: UplinkTopology.Uplink) async -> String {
        let script = """
            import errno, socket, sys
            try:
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
            except OSError as e:
                print(errno.errorcode[e.errno]); sys.exit(0)
            s.settimeout(1)
            s.sendto(b'\\x08\\x00\\x00\\x00\\x00\\x00\\x00\\x01ping', (sys.argv[1], 0))
            try:
                s.recv(64); print('answered')
            except socket.timeout:
                print('silent')
            """
        let result = try? await topology.host.run(["/usr/bin/env", "python3", "-c", script, uplink.gateway])
        return result?.output.trimmingCharacters(in: .whitespacesAndNewlines) ?? "failed"
    }
}
