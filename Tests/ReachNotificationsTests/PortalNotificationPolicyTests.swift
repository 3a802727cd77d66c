import ReachCore
import ReachSupport
import ReachTesting
import Testing

@testable import ReachAPI
@testable import ReachNotifications

/// The policy behind a captive portal, driven by a test clock: "Sign in to the network", its
/// "Open sign-in page" action, and the one warning before a session ends.
@Suite struct PortalNotificationPolicyTests {
    typealias Rig = PolicyRig
    static let signInURL = "http://portal.test/login?from=reachd"
    static let hotel = Policy.Portal(signInURL: signInURL, venue: "hotel.example", interface: "wlan0")

    /// The hotel's portal with a session ending at `end`.
    static func session(endingAt end: TestClock.Instant, interface: String = "wlan0") -> Policy.Portal {
        var portal = hotel
        portal.sessionEndsAt = end
        portal.interface = interface
        return portal
    }

    @Test func behindAPortalItAsksToSignInAndTheActionOpensThePage() {
        var rig = Rig()
        rig.captive(Self.hotel)
        #expect(rig.posts.count == 1)
        let post = rig.posts[0].notification
        #expect(post.summary == "Sign in to the network")
        #expect(post.body == "Sign in at hotel.example to reach the server.")
        #expect(post.icon == "dialog-password")
        #expect(post.category == "network.disconnected")
        #expect(post.expiry == .never)
        #expect(post.resident)
        #expect(
            post.actions == [
                .init(key: "default", label: "Open sign-in page"),
                .init(key: "open-sign-in", label: "Open sign-in page"),
                .init(key: "check-now", label: "Check now"),
            ]
        )
        rig.invoke("open-sign-in")
        rig.invoke("default")
        #expect(rig.opened == [Self.signInURL, Self.signInURL])
        rig.invoke("check-now")
        #expect(rig.checks == 1, "after signing in, the person may ask reachd to look again")

        // Signed in: "Connected" in its place at once.
        rig.advance(by: .seconds(4))
        rig.connected()
        #expect(rig.posts.map(\.replacing) == [0, 1])
        #expect(rig.posts[1].at == .seconds(4))
        #expect(rig.screenSummary == "Connected")
    }

    @Test func aPortalWithoutAKnownPageStillSaysSignInWithoutTheAction() {
        var rig = Rig()
        rig.captive(nil)
        let post = rig.posts[0].notification
        #expect(post.summary == "Sign in to the network")
        #expect(post.body == "Sign in at this network's login page to reach the server.")
        #expect(post.actions == [.init(key: "check-now", label: "Check now")])
        rig.invoke("open-sign-in")
        rig.invoke("default")
        #expect(rig.opened.isEmpty)
    }

    @Test func aSignInPageOfAnotherSchemeIsNeverOpened() {
        for url in [
            "javascript:alert(1)", "file:///etc/passwd", "steam://run/1", "http://portal.test/a b",
            "http://portal.test/\u{7}",
        ] {
            #expect(Policy.Portal(signInURL: url).signInURL == nil, "\(url)")
        }
        #expect(Policy.Portal(signInURL: "HTTPS://Portal.test/login").signInURL == "HTTPS://Portal.test/login")
    }

    @Test func fromWaitingToSignInIsAnUpdateInsideTheRateLimit() {
        var rig = Rig(minInterval: .seconds(10))
        rig.disconnected("timeout")
        rig.advance(by: .seconds(2))
        rig.captive(Self.hotel)
        #expect(rig.posts.count == 1, "both say disconnected: the change waits for the window")
        rig.advance(by: .seconds(8))
        #expect(rig.posts.count == 2)
        #expect(rig.posts[1].replacing == 1)
        #expect(rig.lastSummary == "Sign in to the network")
    }

    @Test func aSessionEndIsWarnedOnceAtTheConfiguredTimeAndTheWarningGoesWithTheSession() {
        var rig = Rig(portalWarning: .seconds(300))
        let end = rig.instant(.seconds(1800))
        rig.connected(portal: Self.session(endingAt: end))
        #expect(rig.posts.isEmpty)
        #expect(rig.policy.nextDeadline == rig.instant(.seconds(1500)))
        rig.advance(by: .seconds(1499))
        #expect(rig.posts.isEmpty)
        rig.advance(by: .seconds(1))
        #expect(rig.posts.count == 1)
        let warning = rig.posts[0].notification
        #expect(warning.summary == "Wi-Fi session ends in 5 minutes")
        #expect(warning.body == "Sign in again at hotel.example to stay connected.")
        #expect(warning.icon == "appointment-soon")
        #expect(warning.expiry == .after(.seconds(300)), "gone by itself when the session ends")
        #expect(warning.actions.map(\.key) == ["default", "open-sign-in"])
        rig.invoke("open-sign-in")
        #expect(rig.opened == [Self.signInURL])

        // The API's countdown moves the end by a few seconds: the same session, warned once.
        rig.advance(by: .seconds(60))
        rig.connected(portal: Self.session(endingAt: end.advanced(by: .seconds(20))))
        rig.advance(by: .seconds(60))
        rig.connected(portal: Self.session(endingAt: end.advanced(by: .seconds(-10))))
        #expect(rig.posts.count == 1)
        // The session ends: the warning goes (if the server has not taken it away by then).
        rig.advance(by: .seconds(300))
        #expect(rig.closes.map(\.id) == [1])
        #expect(rig.screen == nil)
        #expect(rig.posts.count == 1)
    }

    @Test func aSessionEndMovedLaterByMoreThanAMinuteIsANewSession() {
        var rig = Rig(portalWarning: .seconds(300))
        rig.connected(portal: Self.session(endingAt: rig.instant(.seconds(600))))
        rig.advance(by: .seconds(400))
        #expect(rig.posts.count == 1)
        // The person signed in again: an hour more. The old warning is wrong now, and goes at once.
        rig.connected(portal: Self.session(endingAt: rig.instant(.seconds(4000))))
        #expect(rig.closes.map(\.at) == [.seconds(400)])
        #expect(rig.screen == nil)
        rig.advance(by: .seconds(3299))
        #expect(rig.posts.count == 1)
        rig.advance(by: .seconds(1))
        #expect(rig.posts.count == 2, "the new session gets its own warning")
        #expect(rig.posts[1].replacing == 0)
        #expect(rig.posts[1].at == .seconds(3700))
    }

    @Test func aSessionFoundInsideTheWarningSaysWhatIsLeftAndADismissalIsFinal() {
        var rig = Rig(portalWarning: .seconds(300))
        rig.connected(portal: Self.session(endingAt: rig.instant(.seconds(130)), interface: "enp3s0"))
        #expect(rig.posts.count == 1)
        #expect(rig.lastSummary == "Network session ends in 2 minutes")
        rig.dismiss(1)
        rig.advance(by: .seconds(60))
        rig.connected(portal: Self.session(endingAt: rig.instant(.seconds(130)), interface: "enp3s0"))
        rig.advance(by: .seconds(100))
        #expect(rig.posts.count == 1, "once per session, and the person said no")
        #expect(rig.closes.isEmpty)
    }

    @Test func anOutageAtWarningTimeWinsAndRestorationBringsTheWarningInItsPlace() {
        var rig = Rig(minInterval: .seconds(10), portalWarning: .seconds(300))
        let end = rig.instant(.seconds(1000))
        rig.connected(portal: Self.session(endingAt: end))
        rig.advance(by: .seconds(650))
        rig.disconnected("timeout", portal: Self.session(endingAt: end))
        rig.advance(by: .seconds(100))
        #expect(rig.posts.map(\.notification.summary) == ["Waiting for connectivity…"])
        rig.advance(by: .seconds(5))
        rig.connected(portal: Self.session(endingAt: end))
        #expect(rig.posts.count == 2)
        #expect(rig.posts[1].replacing == 1, "in place of the waiting notification, at once")
        #expect(rig.posts[1].notification.summary == "Wi-Fi session ends in 4 minutes")
        rig.advance(by: .seconds(30))
        #expect(rig.posts.count == 2, "no \"Connected\" after it: the warning says as much")
    }

    @Test func aStatusDocumentsPortalBecomesThePolicysOwn() throws {
        let wallNow = WallTime(sinceEpoch: .seconds(1_800_000_000))
        let now = TestClock().now.advanced(by: .seconds(50))
        let document = StatusDocument(
            state: "connected",
            reason: "healthy",
            reasonDetail: "",
            since: RFC3339.string(from: wallNow),
            likelyConnected: true,
            sequence: 3,
            portal: .init(
                captive: false,
                userPortalURL: "https://portal.test/login",
                venueInfoURL: "https://wifi.hotel.example:8443/about",
                secondsRemaining: 600,
                sessionEndsAt: RFC3339.string(from: wallNow.advanced(by: .seconds(600))),
                evidence: "rfc8908",
                interface: "wlp2s0"
            )
        )
        let verdict = Policy.Verdict(document: document, receivedAt: now, wallNow: wallNow)
        #expect(verdict.state == .connected)
        let portal = try #require(verdict.portal)
        #expect(portal.signInURL == "https://portal.test/login")
        #expect(portal.venue == "wifi.hotel.example")
        #expect(portal.sessionEndsAt == now.advanced(by: .seconds(600)))
        #expect(portal.interface == "wlp2s0")

        var captive = document
        captive.state = "disconnected"
        captive.reason = "captive_portal"
        captive.portal = .init(userPortalURL: "http://10.0.0.1<b>/login", evidence: "redirect")
        let held = Policy.Verdict(document: captive, receivedAt: now, wallNow: wallNow)
        #expect(held.needsSignIn)
        #expect(held.portal?.venue == nil, "no markup from the network reaches the screen")
        #expect(held.portal?.sessionEndsAt == nil)
    }

    @Test func portalWords() {
        #expect(
            ConnectivityWording.venue(venueInfoURL: nil, userPortalURL: "http://user@portal.test:8080/x")
                == "portal.test"
        )
        #expect(
            ConnectivityWording.venue(venueInfoURL: "https://[2001:db8::1]/info", userPortalURL: nil) == "2001:db8::1"
        )
        #expect(
            ConnectivityWording.venue(venueInfoURL: "/relative", userPortalURL: "http://portal.test/") == "portal.test"
        )
        #expect(ConnectivityWording.venue(venueInfoURL: nil, userPortalURL: nil) == nil)
        #expect(ConnectivityWording.spokenMinutes(.seconds(59)) == "less than a minute")
        #expect(ConnectivityWording.spokenMinutes(.seconds(89)) == "1 minute")
        #expect(ConnectivityWording.spokenMinutes(.seconds(299)) == "5 minutes")
        #expect(ConnectivityWording.spokenMinutes(.seconds(3900)) == "1 h 5 min")
        #expect(
            ConnectivityWording.sessionEndingSummary(remaining: .seconds(30), interface: nil)
                == "Network session ends in less than a minute"
        )
    }
}
