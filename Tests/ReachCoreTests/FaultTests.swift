import ReachCore
import ReachSupport
import ReachTesting
import Testing

/// Where the path breaks: the rules of ``Fault/init(_:evidence:)`` for every reason and every
/// round of gateway and upstream evidence, and the monitor carrying them.
struct FaultTests {
    static let gatewayAddress = IPAddress("192.168.1.1")!
    static let silentEcho = GatewayFinding(interface: "eth0", address: gatewayAddress, answers: false, evidence: .echo)
    static let answeringEcho = GatewayFinding(
        interface: "eth0",
        address: gatewayAddress,
        answers: true,
        evidence: .echo
    )
    static let failedNeighbour = GatewayFinding(
        interface: "eth0",
        address: gatewayAddress,
        answers: false,
        evidence: .neighbour
    )
    static let reachableNeighbour = GatewayFinding(
        interface: "eth0",
        address: gatewayAddress,
        answers: true,
        evidence: .neighbour
    )
    static let gateways: [GatewayFinding?] = [nil, answeringEcho, silentEcho, reachableNeighbour, failedNeighbour]
    static let upstreams: [UpstreamFinding?] = [nil, .answers, .unreachable]
    static let rounds: [PathEvidenceRound] = gateways.flatMap { gateway in
        upstreams.map { PathEvidenceRound(gateway: gateway, upstream: $0) }
    }
    static let silences: [FailureReason] = [.dnsFailure, .timeout, .networkUnreachable]
    static let answers: [FailureReason] = [
        .connectionRefused, .tlsFailure, .httpStatus(503), .unexpectedBody, .connectionReset, .protocolError,
        .notServing,
    ]

    /// The whole table, computed independently: answers are the server's; silences go to the
    /// nearest failing evidence, gateway first, then upstream; else dns for a name, server otherwise.
    @Test(arguments: silences + answers)
    func aTargetFailureIsPlacedByTheNearestFailingEvidence(_ failure: FailureReason) {
        for round in Self.rounds {
            let expected: Fault =
                if Self.answers.contains(failure) { .server } else if round.gateway?.answers == false {
                    .gateway
                } else if round.upstream == .unreachable { .upstream } else if failure == .dnsFailure { .dns } else {
                    .server
                }
            let fault = Fault(.targetFailed(target: "server", reason: failure), evidence: round)
            #expect(fault == expected, "\(failure), \(round)")
        }
    }

    @Test func linkAndPortalReasonsIgnoreThePathEvidenceAndNonFailuresHaveNoFault() {
        for round in [nil] + Self.rounds {
            for reason in [VerdictReason.noLink, .noAddress, .noRoute] {
                #expect(Fault(reason, evidence: round) == .link)
            }
            #expect(Fault(.captivePortal, evidence: round) == .portal)
            for reason in [VerdictReason.starting, .awaitingProbe, .healthy] {
                #expect(Fault(reason, evidence: round) == nil)
            }
        }
    }

    @Test func beforeTheFirstRoundASilenceHasNoFaultAndAnAnswerIsTheServers() {
        for failure in Self.silences {
            #expect(Fault(.targetFailed(target: "t", reason: failure), evidence: nil) == nil, "\(failure): not guessed")
        }
        for failure in Self.answers {
            #expect(Fault(.targetFailed(target: "t", reason: failure), evidence: nil) == .server, "\(failure)")
        }
    }

    @Test func aRoundWithNothingToAskIsTheReasonAlone() {
        for failure in Self.silences + Self.answers {
            let reason = VerdictReason.targetFailed(target: "t", reason: failure)
            #expect(Fault(reason, evidence: PathEvidenceRound()) == Fault(reason))
        }
    }

    // MARK: The monitor

    @Test func theMonitorPlacesATimeoutAsTheEvidenceArrivesAndForgetsItWhenRestored() async throws {
        let harness = MonitorHarness()
        harness.connect()
        #expect(harness.monitor.current.verdict.fault == nil)
        harness.record(.failure("server", .timeout, phase: .connect, latency: .seconds(2)))
        #expect(harness.state == .disconnected)
        #expect(harness.monitor.current.verdict.fault == nil, "no round yet: not known, never guessed")
        let before = harness.sequence
        harness.monitor.update(pathEvidence: PathEvidenceRound(gateway: Self.silentEcho))
        #expect(harness.monitor.current.verdict.fault == .gateway)
        #expect(harness.sequence == before + 1, "the fault found is news: published")
        harness.monitor.update(pathEvidence: PathEvidenceRound(gateway: Self.silentEcho))
        #expect(harness.sequence == before + 1, "the same round again is not")
        harness.monitor.update(pathEvidence: PathEvidenceRound(gateway: Self.answeringEcho, upstream: .unreachable))
        #expect(harness.monitor.current.verdict.fault == .upstream)
        harness.monitor.update(pathEvidence: PathEvidenceRound(gateway: Self.answeringEcho, upstream: .answers))
        #expect(harness.monitor.current.verdict.fault == .server)
        harness.record(.ok("server"))
        #expect(harness.state == .connected)
        #expect(harness.monitor.current.verdict.fault == nil)
        await harness.stop()
    }

    @Test func aRoundGatheredBeforeTheVerdictTurnsIsInTheFirstDisconnectedEvent() async throws {
        let harness = MonitorHarness(targets: [.http("server", hysteresis: Hysteresis(failuresBeforeDown: 3))])
        harness.connect()
        let events = harness.monitor.subscribe()
        harness.record(.failure("server", .timeout, phase: .connect, latency: .seconds(2)))
        #expect(harness.state == .connected, "one failure of three")
        harness.monitor.update(pathEvidence: PathEvidenceRound(gateway: Self.silentEcho))
        harness.record(.failure("server", .timeout, phase: .connect, latency: .seconds(2)))
        harness.record(.failure("server", .timeout, phase: .connect, latency: .seconds(2)))
        var iterator = events.makeAsyncIterator()
        while let event = await iterator.next(), event.verdict.state != .disconnected {}
        #expect(harness.monitor.current.verdict.fault == .gateway)
        await harness.stop()
    }

    @Test func aTargetOnLoopbackNeedsNoRoundItsFaultIsTheReasonAlone() async {
        let harness = MonitorHarness(targets: [.http("server", host: "127.0.0.1")])
        harness.connect()
        harness.record(.failure("server", .timeout, phase: .connect, latency: .seconds(2)))
        #expect(harness.monitor.current.verdict.fault == .server)
        await harness.stop()
    }

    @Test func anAnswerIsTheServersWhateverTheEvidenceSays() async {
        let harness = MonitorHarness()
        harness.connect()
        harness.monitor.update(pathEvidence: PathEvidenceRound(gateway: Self.silentEcho, upstream: .unreachable))
        harness.record(.refused("server"))
        #expect(harness.monitor.current.verdict.fault == .server)
        await harness.stop()
    }

    @Test func losingTheLinkIsTheLinksFaultAndForgetsThePathEvidence() async {
        let harness = MonitorHarness { $0.linkSettleWindow = .zero }
        harness.connect()
        harness.record(.failure("server", .timeout, phase: .connect, latency: .seconds(2)))
        harness.monitor.update(pathEvidence: PathEvidenceRound(gateway: Self.silentEcho))
        harness.monitor.update(links: .offline)
        #expect(harness.monitor.current.verdict.fault == .link)
        harness.monitor.update(links: .of(.usable()))
        #expect(harness.reason == .awaitingProbe)
        harness.record(.failure("server", .timeout, phase: .connect, latency: .seconds(2)))
        #expect(
            harness.monitor.current.verdict.fault == nil,
            "the gateway of the old link is no evidence on the new one"
        )
        await harness.stop()
    }

    // MARK: Where the evidence comes from

    @Test func theResolverReferenceIsTheFirstResolverBeyondTheDirectlyConnectedNetworks() {
        let links = LinkSnapshot.of(.usable(address: "192.168.1.10/24"))
        let conf =
            "# generated\nsearch lan\nnameserver 127.0.0.53\nnameserver 192.168.1.1\nnameserver 10.0.0.53\noptions edns0\n"
        #expect(
            UpstreamCheck.resolverReference(resolvConf: conf, resolvedUpstream: nil, links: links)
                == HostPort(host: "10.0.0.53", port: 53)
        )
        // Behind systemd-resolved's stub: its upstream servers; the router's own resolver is no reference.
        let stub = "nameserver 127.0.0.53\noptions edns0 trust-ad\n"
        #expect(
            UpstreamCheck.resolverReference(
                resolvConf: stub,
                resolvedUpstream: "nameserver 192.168.1.1\n",
                links: links
            ) == nil
        )
        #expect(
            UpstreamCheck.resolverReference(
                resolvConf: stub,
                resolvedUpstream: "nameserver 192.168.1.1\nnameserver 2001:db8::53\n",
                links: links
            )
                == HostPort(host: "2001:db8::53", port: 53)
        )
        #expect(UpstreamCheck.resolverReference(resolvConf: "", resolvedUpstream: nil, links: nil) == nil)
        #expect(UpstreamCheck.tcp(HostPort(host: "2001:db8::53", port: 53)).description == "tcp://[2001:db8::53]:53")
    }

    @Test func theGatewayOnThePathIsTheDefaultRouteOfTheInterfaceHoldingTheSourceAddress() throws {
        let links = LinkSnapshot.of(
            .usable("eth0", index: 2, address: "192.168.1.10/24", gateway: "192.168.1.1"),
            .usable("wwan0", index: 3, address: "10.64.2.2/24", gateway: "10.64.2.1")
        )
        let found = try #require(links.defaultGateway(from: IPAddress("10.64.2.2")!))
        #expect(found.interface.name == "wwan0")
        #expect(found.gateway == IPAddress("10.64.2.1"))
        #expect(links.defaultGateway(from: IPAddress("172.16.0.1")!) == nil)
    }
}
