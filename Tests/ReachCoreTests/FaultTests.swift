import ReachCore
import ReachTesting
import Testing

/// Where the path breaks: the rules of ``Fault/init(_:gateway:upstream:)`` for every reason and
/// every combination of gateway and upstream evidence, and the monitor carrying them.
struct FaultTests {
    static let gatewayAddress = IPAddress("192.168.1.1")!
    static let silentEcho = GatewayFinding(interface: "eth0", address: gatewayAddress, answers: false, evidence: .echo)
    static let answeringEcho = GatewayFinding(interface: "eth0", address: gatewayAddress, answers: true, evidence: .echo)
    static let failedNeighbour = GatewayFinding(interface: "eth0", address: gatewayAddress, answers: false, evidence: .neighbour)
    static let reachableNeighbour = GatewayFinding(interface: "eth0", address: gatewayAddress, answers: true, evidence: .neighbour)
    static let gateways: [GatewayFinding?] = [nil, answeringEcho, silentEcho, reachableNeighbour, failedNeighbour]
    static let upstreams: [UpstreamFinding?] = [nil, .answers, .unreachable]
    static let answers: [FailureReason] = [.connectionRefused, .tlsFailure, .httpStatus(503), .unexpectedBody, .connectionReset, .protocolError, .notServing]

    /// The whole table, computed independently: answers are the server's; silences go to the
    /// nearest failing evidence, gateway first, then upstream; else dns for a name, server otherwise.
    @Test(arguments: [FailureReason.dnsFailure, .timeout, .networkUnreachable] + answers)
    func aTargetFailureIsPlacedByTheNearestFailingEvidence(_ failure: FailureReason) {
        for gateway in Self.gateways {
            for upstream in Self.upstreams {
                let expected: Fault =
                    if Self.answers.contains(failure) { .server }
                    else if gateway?.answers == false { .gateway }
                    else if upstream == .unreachable { .upstream }
                    else if failure == .dnsFailure { .dns }
                    else { .server }
                let fault = Fault(.targetFailed(target: "server", reason: failure), gateway: gateway, upstream: upstream)
                #expect(fault == expected, "\(failure), gateway \(String(describing: gateway)), upstream \(String(describing: upstream))")
            }
        }
    }

    @Test func linkAndPortalReasonsIgnoreThePathEvidenceAndNonFailuresHaveNoFault() {
        for gateway in Self.gateways {
            for upstream in Self.upstreams {
                for reason in [VerdictReason.noLink, .noAddress, .noRoute] {
                    #expect(Fault(reason, gateway: gateway, upstream: upstream) == .link)
                }
                #expect(Fault(.captivePortal, gateway: gateway, upstream: upstream) == .portal)
                for reason in [VerdictReason.starting, .awaitingProbe, .healthy] {
                    #expect(Fault(reason, gateway: gateway, upstream: upstream) == nil)
                }
            }
        }
    }

    @Test func withoutEvidenceTheFaultIsTheReasonAlone() {
        for failure in [FailureReason.dnsFailure, .timeout, .networkUnreachable] + Self.answers {
            let reason = VerdictReason.targetFailed(target: "t", reason: failure)
            #expect(Fault(reason, gateway: nil, upstream: nil) == Fault(reason))
        }
    }

    // MARK: The monitor

    @Test func theMonitorPlacesATimeoutAsTheEvidenceArrivesAndForgetsItWhenRestored() async throws {
        let harness = MonitorHarness()
        harness.connect()
        #expect(harness.monitor.current.verdict.fault == nil)
        harness.record(.failure("server", .timeout, phase: .connect, latency: .seconds(2)))
        #expect(harness.monitor.current.verdict.fault == .server, "no evidence yet: the reason alone")
        let before = harness.sequence
        harness.monitor.update(gateway: Self.silentEcho)
        #expect(harness.monitor.current.verdict.fault == .gateway)
        #expect(harness.sequence == before + 1, "a new fault is news: published")
        harness.monitor.update(gateway: Self.silentEcho)
        #expect(harness.sequence == before + 1, "the same finding again is not")
        harness.monitor.update(gateway: Self.answeringEcho)
        harness.monitor.update(upstream: .unreachable)
        #expect(harness.monitor.current.verdict.fault == .upstream)
        harness.monitor.update(upstream: .answers)
        #expect(harness.monitor.current.verdict.fault == .server)
        harness.record(.ok("server"))
        #expect(harness.state == .connected)
        #expect(harness.monitor.current.verdict.fault == nil)
        await harness.stop()
    }

    @Test func anAnswerIsTheServersWhateverTheEvidenceSays() async {
        let harness = MonitorHarness()
        harness.connect()
        harness.monitor.update(gateway: Self.silentEcho)
        harness.monitor.update(upstream: .unreachable)
        harness.record(.refused("server"))
        #expect(harness.monitor.current.verdict.fault == .server)
        await harness.stop()
    }

    @Test func losingTheLinkIsTheLinksFaultAndForgetsThePathEvidence() async {
        let harness = MonitorHarness { $0.linkSettleWindow = .zero }
        harness.connect()
        harness.record(.failure("server", .timeout, phase: .connect, latency: .seconds(2)))
        harness.monitor.update(gateway: Self.silentEcho)
        harness.monitor.update(links: .offline)
        #expect(harness.monitor.current.verdict.fault == .link)
        harness.monitor.update(links: .of(.usable()))
        #expect(harness.reason == .awaitingProbe)
        harness.record(.failure("server", .timeout, phase: .connect, latency: .seconds(2)))
        #expect(harness.monitor.current.verdict.fault == .server, "the gateway of the old link is no evidence on the new one")
        await harness.stop()
    }

    // MARK: Where the evidence comes from

    @Test func theResolverReferenceIsTheFirstResolverBeyondTheDirectlyConnectedNetworks() {
        let links = LinkSnapshot.of(.usable(address: "192.168.1.10/24"))
        let conf = "# generated\nsearch lan\nnameserver 127.0.0.53\nnameserver 192.168.1.1\nnameserver 10.0.0.53\noptions edns0\n"
        #expect(UpstreamCheck.resolverReference(resolvConf: conf, resolvedUpstream: nil, links: links) == HostPort(host: "10.0.0.53", port: 53))
        // Behind systemd-resolved's stub: its upstream servers; the router's own resolver is no reference.
        let stub = "nameserver 127.0.0.53\noptions edns0 trust-ad\n"
        #expect(UpstreamCheck.resolverReference(resolvConf: stub, resolvedUpstream: "nameserver 192.168.1.1\n", links: links) == nil)
        #expect(
            UpstreamCheck.resolverReference(resolvConf: stub, resolvedUpstream: "nameserver 192.168.1.1\nnameserver 2001:db8::53\n", links: links)
                == HostPort(host: "2001:db8::53", port: 53))
        #expect(UpstreamCheck.resolverReference(resolvConf: "", resolvedUpstream: nil, links: nil) == nil)
        #expect(UpstreamCheck.tcp(HostPort(host: "2001:db8::53", port: 53)).description == "tcp://[2001:db8::53]:53")
    }

    @Test func theGatewayOnThePathIsTheDefaultRouteOfTheInterfaceHoldingTheSourceAddress() throws {
        let links = LinkSnapshot.of(.usable("eth0", index: 2, address: "192.168.1.10/24", gateway: "192.168.1.1"),
                                    .usable("wwan0", index: 3, address: "10.64.2.2/24", gateway: "10.64.2.1"))
        let found = try #require(links.defaultGateway(from: IPAddress("10.64.2.2")!))
        #expect(found.interface.name == "wwan0")
        #expect(found.gateway == IPAddress("10.64.2.1"))
        #expect(links.defaultGateway(from: IPAddress("172.16.0.1")!) == nil)
    }
}
