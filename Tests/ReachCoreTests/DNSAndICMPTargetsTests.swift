import ReachCore
import ReachSupport
import ReachTesting
import Testing

/// What the core makes of `dns` and `icmp` targets: whose fault their failures are, what a burst
/// of echoes measures, and the checks' own rules (a PTR question for an address, the spacing of a
/// burst, which names can be asked).
struct DNSAndICMPTargetsTests {
    static let gateway = IPAddress("192.168.1.1")!
    static let dns = ProbeTarget(
        name: "resolver",
        check: .dns(DNSCheck(query: "api.example.org", server: HostPort(host: "203.0.113.53", port: 53)))
    )
    static let icmp = ProbeTarget(name: "ping", check: .icmp(ICMPCheck(host: "203.0.113.1")))

    @Test func aResolversOwnAnswerIsDNSWhateverTheEvidence() {
        for failure in [
            FailureReason.nxdomain, .servfail, .dnsRefused, .truncatedAnswer, .malformedAnswer, .unexpectedAnswer,
        ] {
            for round in [nil] + FaultTests.rounds {
                #expect(
                    Fault(.targetFailed(target: "resolver", reason: failure), evidence: round) == .dns,
                    "\(failure)"
                )
            }
        }
        #expect(
            Fault(.targetFailed(target: "resolver", reason: .noResolver), evidence: nil) == .dns,
            "nothing to gather"
        )
    }

    @Test func notPermittedIsNoFaultOfThePath() {
        for round in [nil] + FaultTests.rounds {
            #expect(Fault(.targetFailed(target: "ping", reason: .notPermitted), evidence: round) == nil)
        }
        #expect(Fault(.notPermitted) == nil)
        #expect(!FailureReason.notPermitted.needsPathEvidence && !FailureReason.noResolver.needsPathEvidence)
    }

    @Test func aRoutersICMPErrorIsPlacedByTheEvidenceLikeASilence() {
        for failure in [FailureReason.destinationUnreachable, .timeExceeded] {
            #expect(failure.needsPathEvidence)
            #expect(Fault(.targetFailed(target: "ping", reason: failure), evidence: nil) == nil, "not known yet")
            let silent = GatewayFinding(interface: "eth0", address: Self.gateway, answers: false, evidence: .echo)
            #expect(
                Fault(.targetFailed(target: "ping", reason: failure), evidence: PathEvidenceRound(gateway: silent))
                    == .gateway
            )
            #expect(
                Fault(.targetFailed(target: "ping", reason: failure), evidence: PathEvidenceRound(upstream: .answers))
                    == .server
            )
        }
    }

    @Test func aDNSTargetsSilenceIsItsResolversFaultUnlessTheEvidenceSaysOtherwise() async {
        let harness = MonitorHarness(targets: [Self.dns])
        harness.monitor.update(links: .of(.usable()))
        harness.record(.failure("resolver", .timeout, latency: .seconds(2)))
        #expect(harness.state == .disconnected)
        #expect(harness.monitor.current.verdict.fault == nil, "no round yet")
        harness.monitor.update(pathEvidence: PathEvidenceRound(upstream: .answers))
        #expect(harness.monitor.current.verdict.fault == .dns, "what would be the server's is the resolver's")
        harness.monitor.update(pathEvidence: PathEvidenceRound(upstream: .unreachable))
        #expect(harness.monitor.current.verdict.fault == .upstream)
        harness.record(.refused("resolver"))
        #expect(harness.monitor.current.verdict.fault == .dns, "a stopped resolver (port unreachable)")
        await harness.stop()
    }

    @Test func anICMPTargetNotPermittedIsDisconnectedWithoutAFault() async {
        let harness = MonitorHarness(targets: [Self.icmp])
        harness.monitor.update(links: .of(.usable()))
        harness.record(.failure("ping", .notPermitted, latency: .zero))
        #expect(harness.state == .disconnected)
        #expect(harness.reason == .targetFailed(target: "ping", reason: .notPermitted))
        #expect(harness.monitor.current.verdict.fault == nil, "not the network's: a setting of this machine")
        await harness.stop()
    }

    @Test func aBurstMeasuresLossRoundTripsAndJitter() {
        let burst = EchoStatistics(sent: 5, roundTrips: [10, 14, 12, 30].map(Duration.milliseconds))
        #expect(burst.received == 4 && burst.loss == 0.2)
        #expect(burst.minimum == .milliseconds(10) && burst.maximum == .milliseconds(30))
        #expect(burst.median == .milliseconds(13), "the mean of the two middle ones")
        // |14-10| + |12-14| + |30-12| = 4 + 2 + 18 = 24, over 3 steps.
        #expect(burst.jitter == .milliseconds(8))
        let one = EchoStatistics(sent: 5, roundTrips: [.milliseconds(7)])
        #expect(one.median == .milliseconds(7) && one.jitter == nil)
        let none = EchoStatistics(sent: 5, roundTrips: [])
        #expect(none.loss == 1 && none.median == nil && none.minimum == nil)
        #expect(EchoStatistics(sent: 0, roundTrips: []).loss == 0)
    }

    @Test func aBurstSpansTheIntervalAndLeavesItsLastEchoHalfTheTimeout() {
        let five = ICMPCheck(host: "192.0.2.1")
        #expect(five.spacing(interval: .seconds(1), timeout: .seconds(2)) == .milliseconds(200))
        #expect(five.spacing(interval: .seconds(10), timeout: .seconds(2)) == .milliseconds(200), "half the timeout")
        #expect(five.spacing(interval: .seconds(1), timeout: .milliseconds(500)) == .milliseconds(50))
        #expect(ICMPCheck(host: "192.0.2.1", packets: 0).packets == 1)
    }

    @Test func aPTRQuestionForAnAddressAsksItsReverseName() {
        #expect(DNSCheck(query: "192.0.2.10", recordType: .ptr).questionName == "10.2.0.192.in-addr.arpa")
        #expect(
            DNSCheck(query: "2001:db8::1", recordType: .ptr).questionName
                == "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa"
        )
        #expect(DNSCheck(query: "192.0.2.10", recordType: .a).questionName == "192.0.2.10")
    }

    @Test func onlyANameThatFitsTheWireCanBeAsked() {
        for good in ["api.example.org", "api.example.org.", ".", "_sip._tcp.example.org", "xn--bcher-kva.example"] {
            #expect(DNSCheck.problem(withQuery: good) == nil, "\(good)")
        }
        for bad in [
            "api..example.org", "bücher.example", "has space.example", String(repeating: "a", count: 64) + ".org",
        ] {
            #expect(DNSCheck.problem(withQuery: bad) != nil, "\(bad)")
        }
        #expect(DNSCheck.problem(withQuery: String(repeating: "abcdefgh.", count: 29)) != nil, "past 253 characters")
    }

    @Test func responseCodesAreNamedAsDigNamesThem() {
        #expect(DNSResponseCode(name: "nxdomain") == .nonExistentDomain)
        #expect(DNSResponseCode(name: "NOERROR") == .noError)
        #expect(DNSResponseCode(name: "BOGUS") == nil)
        #expect("\(DNSResponseCode(16))" == "BADVERS" && "\(DNSResponseCode(4000))" == "RCODE4000")
    }
}
