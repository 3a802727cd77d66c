import Foundation
import ReachAPI
import ReachCore
import ReachKit
import ReachSupport
import ReachTesting
import Testing

/// What a program sees of a verdict, and that it sees the same whether it embeds the monitor or
/// follows reachd.
@Suite("What a program sees of a verdict")
struct ServiceVerdictTests {
    /// Finer than the status API's milliseconds.
    static let at = WallTime(sinceEpoch: .seconds(1_800_000_000) + .microseconds(123_456))

    /// Everything a program reads: a refused target and where the path breaks, a signed-in portal
    /// session, two uplinks, a family that fails while the other answers; with probe timings,
    /// counts and check times besides, which the status API does not carry.
    static let verdict: Verdict = {
        let at = ServiceVerdictTests.at
        let refused = ProbeResult.refused("server")
        let server = TargetStatus(
            name: "server",
            kind: "http",
            health: .unhealthy,
            lastResult: refused,
            lastFailure: refused.failure,
            lastCheckedAt: at,
            consecutiveFailures: 3,
            certificate: ServerCertificate(
                notAfter: at.advanced(by: .seconds(86_400 * 30)),
                subject: "CN=api.example.com",
                issuer: "CN=Example CA"
            )
        )
        var mirror = TargetStatus(
            name: "mirror",
            kind: "tcp",
            health: .healthy,
            lastResult: .ok("mirror"),
            lastCheckedAt: at,
            consecutiveSuccesses: 5
        )
        (mirror.families, mirror.answeredFamilies, mirror.degradedFamilies) = ([.ipv4, .ipv6], [.ipv4], [.ipv6])
        let portal = CaptivePortal(
            evidence: .rfc8908,
            isCaptive: false,
            userPortalURL: "https://portal.example/login",
            venueInfoURL: "https://venue.example/",
            secondsRemaining: 1800,
            bytesRemaining: 10_000_000,
            sessionEndsAt: at.advanced(by: .seconds(1800)),
            interface: "eth0"
        )
        var verdict = Verdict(
            state: .disconnected,
            reason: .targetFailed(target: "server", reason: .connectionRefused),
            since: at,
            usableInterfaces: ["eth0", "wwan0"],
            targets: [server, mirror],
            portal: portal,
            fault: .server
        )
        verdict.interfaces = [
            InterfaceReachability(name: "eth0", reachable: false, reason: .connectionRefused, fault: .server),
            InterfaceReachability(name: "wwan0", reachable: true, latency: .microseconds(41_234)),
        ]
        return verdict
    }()

    @Test func aVerdictReadsTheSameEmbeddedAsFollowedFromReachd() throws {
        let embedded = ServiceVerdict(Self.verdict)
        // What reachd sends for the verdict on /v1/events, read as ReachdService reads it.
        var parser = EventStreamParser()
        let frame = StatusDocument(
            event: ConnectivityEvent(sequence: 42, verdict: Self.verdict),
            likelyConnected: false
        ).eventFrame
        let event = try #require(try parser.feed(frame).first)
        let followed = ServiceVerdict(try StatusDocument(event: event))
        #expect(followed == embedded)
    }

    @Test func itCarriesTheFaultThePortalTheUplinksAndTheDegradedFamilies() {
        let seen = ServiceVerdict(Self.verdict)
        #expect(seen.fault == .server)
        #expect(seen.failingTarget == "server")
        #expect(seen.portal?.userPortalURL == "https://portal.example/login")
        #expect(seen.portal?.venueInfoURL == "https://venue.example/")
        let toTheMillisecond = WallTime(sinceEpoch: .seconds(1_800_000_000) + .milliseconds(123))
        #expect(seen.portal?.sessionEndsAt == toTheMillisecond.advanced(by: .seconds(1800)))
        #expect(seen.since == toTheMillisecond)
        #expect(seen.interfaces.map(\.name) == ["eth0", "wwan0"])
        #expect(seen.interfaces.map(\.reachable) == [false, true])
        #expect(seen.interfaces.first?.fault == .server)
        #expect(seen.degradedFamilies == [.ipv6])
        #expect(seen.targets.map(\.health) == [.unhealthy, .healthy])
        #expect(seen.targets.first?.unhealthyReason == .connectionRefused)
    }

    @Test func aVerdictThatIsNoTargetsFailureNamesNoTarget() {
        let seen = ServiceVerdict(Verdict(state: .disconnected, reason: .noLink, since: Self.at, fault: .link))
        #expect(seen.failingTarget == nil)
        #expect(seen.fault == .link)
        #expect(
            ServiceVerdict(state: .unknown, reason: .reachdUnreachable("connection refused"), since: Self.at)
                .failingTarget == nil
        )
    }
}
