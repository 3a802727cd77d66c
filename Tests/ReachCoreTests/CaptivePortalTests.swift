import ReachCore
import ReachSupport
import ReachTesting
import Testing

/// Captive portals in the pure core: which evidence decides, that a portal is never `connected`,
/// and that signing in restores the verdict at the next result.
@Suite struct CaptivePortalTests {
    static let checkURL = "http://check.example/generate_204"
    static let signIn = "http://portal.example/login"

    static let portalCheck = PortalCheck(
        target: ProbeTarget(
            name: "ignored",
            check: .http(
                HTTPCheck(
                    url: checkURL,
                    endpoint: HostPort(host: "check.example", port: 80),
                    expectation: HTTPExpectation(statuses: [204...204])
                )
            )
        )
    )

    static func harness(targets: [ProbeTarget] = [.http("server")]) -> MonitorHarness {
        MonitorHarness(targets: targets) {
            $0.portalCheck = portalCheck
            $0.linkSettleWindow = .zero
        }
    }

    /// A harness on a usable link whose one target, `api` over HTTPS, has just failed its certificate.
    /// An HTTPS target `api` and a check URL, on a usable link.
    static func harnessWithAnHTTPSTarget() -> MonitorHarness {
        let https = ProbeTarget(
            name: "api",
            check: .http(
                HTTPCheck(url: "https://203.0.113.10/health", endpoint: HostPort(host: "203.0.113.10", port: 443))
            )
        )
        let harness = Self.harness(targets: [https])
        harness.monitor.update(links: .of(.usable()))
        return harness
    }

    static func harnessWhoseHTTPSTargetFailedItsCertificate() -> MonitorHarness {
        let harness = harnessWithAnHTTPSTarget()
        harness.record(.failure("api", .tlsFailure, phase: .tls, latency: .milliseconds(3)))
        return harness
    }

    static func check(_ status: Int?, location: String? = nil) -> ProbeResult {
        guard let status else {
            return .failure(PortalCheck.probeName, .timeout, phase: .connect, latency: .seconds(2))
        }
        if status == 204 { return .ok(PortalCheck.probeName) }
        return ProbeResult(
            target: PortalCheck.probeName,
            failure: ProbeFailure(.httpStatus(status), phase: .head, location: location),
            timings: ProbeTimings(total: .milliseconds(3))
        )
    }

    static func redirected(_ target: String, to location: String) -> ProbeResult {
        ProbeResult(
            target: target,
            failure: ProbeFailure(.httpStatus(302), phase: .head, location: location),
            timings: ProbeTimings(total: .milliseconds(2))
        )
    }

    @Test func aLoginPageThatAnswersTheTargetIsStillAPortalWhenTheCheckURLIsIntercepted() async {
        let harness = Self.harness()
        harness.connect()
        #expect(harness.state == .connected)
        // The portal answers everything with its login page: the target's probe gets 200.
        harness.record(Self.check(200))
        harness.record(.ok("server"))
        #expect(harness.state == .disconnected)
        #expect(harness.reason == .captivePortal)
        #expect(
            harness.monitor.current.verdict.portal == CaptivePortal(evidence: .checkURL, userPortalURL: Self.checkURL)
        )
        // Signed in: the next check answers 204.
        harness.record(Self.check(204))
        #expect(harness.state == .connected)
        #expect(harness.monitor.current.verdict.portal == nil)
        await harness.stop()
    }

    @Test func theCheckURLsRedirectIsWhereToSignIn() async {
        let harness = Self.harness()
        harness.connect()
        harness.record(Self.check(302, location: Self.signIn))
        #expect(harness.monitor.current.verdict.portal?.userPortalURL == Self.signIn)
        #expect(harness.reason == .captivePortal)
        await harness.stop()
    }

    @Test func aCheckThatLearnedNothingLeavesTheLastAnswerStanding() async {
        let harness = Self.harness()
        harness.connect()
        harness.record(Self.check(200))
        harness.record(Self.check(nil))
        #expect(harness.reason == .captivePortal)
        harness.record(Self.check(204))
        harness.record(Self.check(nil))
        #expect(harness.state == .connected)
        await harness.stop()
    }

    @Test func aNewLinkForgetsTheCheckURLsAnswer() async {
        let harness = Self.harness()
        harness.connect()
        harness.record(Self.check(200))
        harness.monitor.update(links: .of())
        harness.monitor.update(links: .of(.usable("wlan0", index: 3)))
        harness.record(.ok("server"))
        #expect(harness.state == .connected)
        await harness.stop()
    }

    @Test func aRedirectToAnotherHostIsAPortalWithoutACheckURL() async {
        let harness = MonitorHarness()
        harness.connect()
        harness.record(Self.redirected("server", to: Self.signIn))
        #expect(harness.reason == .captivePortal)
        #expect(
            harness.monitor.current.verdict.portal == CaptivePortal(evidence: .redirect, userPortalURL: Self.signIn)
        )
        harness.record(.ok("server"))
        #expect(harness.state == .connected)
        await harness.stop()
    }

    @Test func aRedirectWithinTheServerIsTheServersOwnAnswer() async {
        let harness = MonitorHarness()
        harness.connect()
        harness.record(Self.redirected("server", to: "/api/v2/health"))
        #expect(harness.reason == .targetFailed(target: "server", reason: .httpStatus(302)))
        harness.record(Self.redirected("server", to: "http://203.0.113.10:80/elsewhere"))
        #expect(harness.reason == .targetFailed(target: "server", reason: .httpStatus(302)))
        // Relative, even with another host's URL in its query.
        harness.record(Self.redirected("server", to: "/login?next=http://portal.example/"))
        #expect(harness.reason == .targetFailed(target: "server", reason: .httpStatus(302)))
        #expect(harness.monitor.current.verdict.portal == nil)
        await harness.stop()
    }

    @Test func anHTTPSTargetFailingItsCertificateBehindAnInterceptedCheckURLIsInterception() async {
        let harness = Self.harnessWhoseHTTPSTargetFailedItsCertificate()
        #expect(harness.reason == .targetFailed(target: "api", reason: .tlsFailure))
        #expect(
            harness.monitor.current.verdict.fault == nil,
            "the server's or a portal's: not known until the check URL is asked"
        )
        harness.clock.advance(by: .milliseconds(10))  // the next check begins after the failure
        harness.record(Self.check(200))
        #expect(harness.reason == .captivePortal)
        #expect(harness.monitor.current.verdict.fault == .portal)
        #expect(harness.monitor.current.verdict.portal?.evidence == .tlsIntercepted)
        harness.record(Self.check(204))
        #expect(harness.reason == .targetFailed(target: "api", reason: .tlsFailure))
        #expect(harness.monitor.current.verdict.fault == .server)
        await harness.stop()
    }

    /// A check that began before the target failed (its answer came after, on a loaded machine) may
    /// have crossed the network before the portal came: it does not tell whose fault it is.
    @Test func aCheckThatBeganBeforeTheFailureDoesNotTellWhoseFaultItIs() async {
        let harness = Self.harnessWhoseHTTPSTargetFailedItsCertificate()
        harness.clock.advance(by: .milliseconds(500))
        // 204, but from a probe that began 800 ms ago, 300 ms before the failure.
        harness.record(
            ProbeResult(target: PortalCheck.probeName, timings: ProbeTimings(total: .milliseconds(800)))
        )
        #expect(harness.monitor.current.verdict.fault == nil, "not the server's: the check is older than the failure")
        harness.clock.advance(by: .milliseconds(500))
        harness.record(Self.check(200))
        #expect(harness.monitor.current.verdict.fault == .portal)
        #expect(harness.monitor.current.verdict.portal?.evidence == .tlsIntercepted)
        await harness.stop()
    }

    /// Dated by when the probes ran, not by when the monitor took their results: a loaded machine
    /// handed over a short check that began before the failure long after it, and its time less its
    /// duration fell after the failure.
    @Test func aCheckHandedOverLateIsDatedByWhenItBegan() async {
        let harness = Self.harnessWhoseHTTPSTargetFailedItsCertificate()
        let failed = harness.clock.monitorClock.wallTime
        harness.clock.advance(by: .milliseconds(500))
        harness.monitor.record(
            ProbeResult(target: PortalCheck.probeName, timings: ProbeTimings(total: .milliseconds(150))),
            epoch: harness.monitor.probeEpoch,
            span: ProbeSpan(
                began: failed.advanced(by: .milliseconds(-100)),
                ended: failed.advanced(by: .milliseconds(50))
            )
        )
        #expect(harness.monitor.current.verdict.fault == nil, "not the server's: the check began before the failure")
        harness.monitor.record(
            ProbeResult(target: PortalCheck.probeName, timings: ProbeTimings(total: .milliseconds(150))),
            epoch: harness.monitor.probeEpoch,
            span: ProbeSpan(
                began: failed.advanced(by: .milliseconds(10)),
                ended: failed.advanced(by: .milliseconds(160))
            )
        )
        #expect(harness.monitor.current.verdict.fault == .server, "a 204 from a check begun after the failure tells")
        await harness.stop()
    }

    /// A portal that comes while a probe is under way cuts its connection: in the fault matrix the
    /// HTTPS target's first failure behind the portal was a reset, of a probe begun just before the
    /// portal came, before any check URL probe had crossed it, and the fault read `server`, then
    /// `portal` (1 matrix run in 2). A reset waits for the check URL, as an answer of the portal's does.
    @Test func aConnectionCutAsAPortalComesIsNotTheServersUntilTheCheckURLTells() async {
        let harness = Self.harnessWithAnHTTPSTarget()
        harness.record(.ok("api"))
        harness.record(Self.check(204))
        #expect(harness.state == .connected)
        harness.clock.advance(by: .milliseconds(250))
        harness.record(.failure("api", .connectionReset, phase: .tls, latency: .milliseconds(55)))
        #expect(harness.reason == .targetFailed(target: "api", reason: .connectionReset))
        #expect(harness.monitor.current.verdict.fault == nil, "the server's or a portal's: not known yet")
        harness.clock.advance(by: .milliseconds(500))  // the next check begins after the failure
        harness.record(Self.check(200))
        #expect(harness.reason == .captivePortal)
        #expect(harness.monitor.current.verdict.fault == .portal)
        harness.record(.failure("api", .connectionReset, phase: .head, latency: .milliseconds(5)))
        harness.clock.advance(by: .milliseconds(500))
        harness.record(Self.check(204))
        #expect(harness.monitor.current.verdict.fault == .server, "a reset with no portal on the path is the server's")
        await harness.stop()
    }

    @Test func aFailureAPortalCannotCauseIsTheServersAtOnceEvenWithACheckURL() async {
        let harness = Self.harness()
        harness.connect()
        harness.record(.refused("server"))
        #expect(harness.monitor.current.verdict.fault == .server)
        await harness.stop()
    }

    @Test func theNetworksAPIDecidesFirstAndIsNotSecondGuessed() async {
        let harness = Self.harness()
        harness.connect()
        harness.monitor.update(
            portalAPI: CaptivePortalAPIAnswer(isCaptive: true, userPortalURL: Self.signIn),
            interface: "eth0"
        )
        #expect(harness.reason == .captivePortal)
        #expect(harness.monitor.current.verdict.portal?.evidence == .rfc8908)
        #expect(harness.monitor.current.verdict.portal?.interface == "eth0")
        // The API says "not captive": an intercepted check URL and a redirect do not overrule it.
        harness.monitor.update(portalAPI: CaptivePortalAPIAnswer(isCaptive: false), interface: "eth0")
        harness.record(Self.check(200))
        harness.record(Self.redirected("server", to: Self.signIn))
        #expect(harness.reason == .targetFailed(target: "server", reason: .httpStatus(302)))
        // No API any more: the other evidence speaks again.
        harness.monitor.update(portalAPI: nil, interface: "eth0")
        #expect(harness.reason == .captivePortal)
        await harness.stop()
    }

    @Test func aSignedInSessionIsConnectedAndSaysWhenItEnds() async {
        let harness = MonitorHarness()
        harness.connect()
        let now = harness.monitor.current.verdict.since
        harness.monitor.update(
            portalAPI: CaptivePortalAPIAnswer(isCaptive: false, userPortalURL: Self.signIn, secondsRemaining: 3600),
            interface: "eth0"
        )
        let portal = harness.monitor.current.verdict.portal
        #expect(harness.state == .connected)
        #expect(portal?.isCaptive == false)
        #expect(portal?.secondsRemaining == 3600)
        #expect(portal?.sessionEndsAt.map { $0.sinceEpoch - now.sinceEpoch } == .seconds(3600))
        await harness.stop()
    }

    @Test func theSessionCountingDownIsNotNewsButAnExtensionIs() async {
        let harness = MonitorHarness()
        harness.connect()
        harness.monitor.update(
            portalAPI: CaptivePortalAPIAnswer(isCaptive: false, secondsRemaining: 600),
            interface: "eth0"
        )
        let published = harness.sequence
        harness.clock.advance(by: .seconds(1))
        harness.monitor.update(
            portalAPI: CaptivePortalAPIAnswer(isCaptive: false, secondsRemaining: 599),
            interface: "eth0"
        )
        #expect(harness.sequence == published)
        #expect(harness.monitor.current.verdict.portal?.secondsRemaining == 599)
        harness.monitor.update(
            portalAPI: CaptivePortalAPIAnswer(isCaptive: false, secondsRemaining: 3600),
            interface: "eth0"
        )
        #expect(harness.sequence == published + 1)
        await harness.stop()
    }

    @Test(arguments: [
        ("http://portal.example:8080/login", "http://portal.example:8080/login"),
        ("https://user@portal.example/x", "https://user@portal.example/x"),
        ("http://[2001:db8::1]:80/", "http://[2001:db8::1]:80/"),
        ("//portal.example/login", "http://portal.example/login"),
    ])
    func redirectsToAnotherHostAreTold(location: String, signIn: String) async {
        let harness = MonitorHarness()
        harness.connect()
        harness.record(Self.redirected("server", to: location))
        #expect(
            harness.monitor.current.verdict.portal?.userPortalURL == signIn,
            "a relative Location is resolved against the probe's URL"
        )
        await harness.stop()
    }

    @Test func theCheckURLsRelativeRedirectIsResolvedAgainstIt() async {
        let harness = Self.harness()
        harness.connect()
        harness.record(Self.check(302, location: "/login?from=check"))
        #expect(harness.monitor.current.verdict.portal?.userPortalURL == "http://check.example/login?from=check")
        harness.record(Self.check(302, location: "javascript:alert(1)"))
        #expect(
            harness.monitor.current.verdict.portal?.userPortalURL == Self.checkURL,
            "never a place that is not a web page"
        )
        await harness.stop()
    }
}

/// When a portal's session-end warning is due: once per session, `lead` before its end.
@Suite struct PortalSessionWarningsTests {
    static func at(_ seconds: Int) -> WallTime { WallTime(sinceEpoch: .seconds(1_800_000_000 + seconds)) }

    @Test func warnsOnceWhenTheEndIsWithinTheLead() {
        var warnings = PortalSessionWarnings<WallTime>(lead: .seconds(300))
        let end = Self.at(3600)
        let early = warnings.shouldWarn(interface: "wlan0", sessionEndsAt: end, now: Self.at(0))
        #expect(!early)
        #expect(warnings.untilWarning(sessionEndsAt: end, now: Self.at(0)) == .seconds(3300))
        let due = warnings.shouldWarn(interface: "wlan0", sessionEndsAt: end, now: Self.at(3300))
        #expect(due)
        let sameSession = warnings.shouldWarn(interface: "wlan0", sessionEndsAt: Self.at(3601), now: Self.at(3310))
        #expect(!sameSession)
        #expect(warnings.untilWarning(sessionEndsAt: end, now: Self.at(3310)) == nil)
    }

    @Test func anExtendedSessionIsWarnedAboutAgain() {
        var warnings = PortalSessionWarnings<WallTime>(lead: .seconds(300))
        let short = warnings.shouldWarn(interface: "wlan0", sessionEndsAt: Self.at(200), now: Self.at(0))
        #expect(short)
        let extended = warnings.shouldWarn(interface: "wlan0", sessionEndsAt: Self.at(3800), now: Self.at(100))
        #expect(!extended, "an hour away again: not yet")
        let extendedDue = warnings.shouldWarn(interface: "wlan0", sessionEndsAt: Self.at(3800), now: Self.at(3600))
        #expect(extendedDue)
        warnings.forget(interface: "wlan0")
        let afterForgetting = warnings.shouldWarn(interface: "wlan0", sessionEndsAt: Self.at(3800), now: Self.at(3600))
        #expect(afterForgetting)
    }

    /// The desktop agent asks on its monotonic clock, and notes the warning only once it is posted.
    @Test func askingNotesNothingUntilTheWarningIsNoted() {
        let start = ContinuousClock.Instant.now
        var warnings = PortalSessionWarnings<ContinuousClock.Instant>(lead: .seconds(300))
        let end = start.advanced(by: .seconds(600))
        #expect(!warnings.isDue(interface: "", sessionEndsAt: end, now: start))
        #expect(warnings.isDue(interface: "", sessionEndsAt: end, now: start.advanced(by: .seconds(300))))
        #expect(
            warnings.isDue(interface: "", sessionEndsAt: end, now: start.advanced(by: .seconds(301))),
            "still due: nothing was noted"
        )
        warnings.warned(interface: "", sessionEndsAt: end)
        #expect(
            !warnings.isDue(
                interface: "",
                sessionEndsAt: end.advanced(by: .seconds(1)),
                now: start.advanced(by: .seconds(400))
            )
        )
    }
}
