import ReachAPI
import ReachCore
import ReachTesting
import Testing

@testable import ReachNotifications

/// The notification policy driven by a test clock: every rule, step by step and under random storms.
@Suite struct NotificationPolicyTests {
    typealias Rig = PolicyRig

    @Test func aLossShowsOnePersistentWaitingNotificationAtOnce() {
        var rig = Rig()
        rig.disconnected()
        #expect(rig.posts.count == 1)
        let post = rig.posts[0]
        #expect(post.replacing == 0)
        #expect(post.notification.summary == "Waiting for connectivity…")
        #expect(post.notification.body == "The server refused the connection (target server).")
        #expect(post.notification.expiry == .never)
        #expect(post.notification.urgency == .normal)
        #expect(post.notification.category == "network.disconnected")
        #expect(post.notification.appName == "reachd")
        #expect(post.notification.icon == "network-error")
        #expect(post.notification.resident)
        #expect(post.notification.actions == [.init(key: "check-now", label: "Check now")])
        #expect(rig.policy.notificationID == 1)
        #expect(rig.policy.nextDeadline == nil)
    }

    @Test func restorationReplacesItWithABriefTransientConnected() {
        var rig = Rig()
        rig.disconnected("no_link", target: nil)
        #expect(rig.posts.last?.notification.icon == "network-offline")
        rig.advance(by: .seconds(125))
        rig.connected()
        #expect(rig.posts.count == 2)
        let post = rig.posts[1]
        #expect(post.replacing == 1, "one notification: the waiting one is replaced")
        #expect(post.notification.summary == "Connected")
        #expect(post.notification.body == "The server can be reached again after 2 min 5 s.")
        #expect(post.notification.expiry == .after(.seconds(5)))
        #expect(post.notification.transient)
        #expect(post.notification.category == "network.connected")
        #expect(post.notification.actions.isEmpty)
        // Nothing more for this outage, however long we wait or however often reachd repeats it.
        rig.advance(by: .seconds(60))
        rig.connected()
        #expect(rig.posts.count == 2)
    }

    /// A silence whose fault is not known yet says why and no more; the fault found updates the
    /// same notification in place, within the rate limit's window like any other change of words.
    @Test func theFaultFoundLeadsTheSameNotificationsBodyWhenItComes() {
        var rig = Rig()
        rig.disconnected("timeout")
        #expect(rig.posts.last?.notification.body == "The server did not answer in time (target server).")
        rig.advance(by: .seconds(2))
        rig.disconnected("timeout", fault: "gateway")
        #expect(rig.posts.count == 1, "within the window: no second pop-up yet")
        rig.advance(by: rig.policy.settings.minInterval)
        #expect(rig.posts.count == 2)
        #expect(rig.posts.last?.replacing == 1, "updated in place")
        #expect(
            rig.posts.last?.notification.body
                == "Your router is not answering. The server did not answer in time (target server)."
        )
    }

    @Test func connectedOrUnknownAloneShowNothing() {
        var rig = Rig()
        rig.apply(rig.policy.verdict(.init(state: .unknown, reason: "starting"), at: rig.now))
        rig.connected()
        rig.advance(by: .seconds(30))
        #expect(rig.posts.isEmpty)
        // unknown in the middle of an outage (reachd restarted) keeps the waiting notification.
        rig.disconnected()
        rig.apply(rig.policy.verdict(.init(state: .unknown, reason: "starting"), at: rig.now))
        rig.advance(by: .seconds(30))
        #expect(rig.posts.count == 1)
    }

    @Test func aChangeInsideTheWindowWaitsForItsEndThenShowsTheLatestState() {
        var rig = Rig(minInterval: .seconds(10))
        rig.disconnected("connection_refused")
        rig.advance(by: .seconds(2))
        rig.disconnected("timeout")
        rig.advance(by: .seconds(2))
        rig.disconnected("dns_failure")
        #expect(rig.posts.count == 1, "deferred")
        #expect(rig.policy.nextDeadline?.offset == .seconds(10))
        rig.advance(by: .milliseconds(5999))
        #expect(rig.posts.count == 1)
        rig.advance(by: .milliseconds(1))
        #expect(rig.posts.count == 2)
        #expect(rig.posts[1].at == .seconds(10))
        #expect(rig.posts[1].replacing == 1)
        #expect(rig.posts[1].notification.body == "The server's name could not be looked up (target server).")
    }

    @Test func aRestorationInsideTheWindowReplacesTheWaitingNotificationAtOnce() {
        var rig = Rig(minInterval: .seconds(10))
        rig.disconnected()
        rig.advance(by: .seconds(3))
        rig.connected()
        #expect(rig.posts.map { $0.notification.summary } == ["Waiting for connectivity…", "Connected"])
        #expect(rig.posts[1].at == .seconds(3), "at once, not when the window ends")
        #expect(rig.posts[1].replacing == 1, "in place: no new pop-up")
        #expect(rig.posts[1].notification.body == "The server can be reached again after 3 s.")
        #expect(rig.screenSummary == "Connected")
        #expect(rig.policy.nextDeadline == nil)
        rig.advance(by: .seconds(30))
        #expect(rig.posts.count == 2)
    }

    @Test func aConnectedOnScreenIsWithdrawnAtOnceWhenTheServerGoesAgainInsideTheWindow() {
        var rig = Rig(minInterval: .seconds(10))
        rig.disconnected()
        rig.advance(by: .seconds(3))
        rig.connected()
        rig.advance(by: .seconds(1))
        rig.disconnected("timeout")
        #expect(rig.closes.map(\.id) == [1], "\"Connected\" would be a lie now")
        #expect(rig.closes.first?.at == .seconds(4))
        #expect(rig.screen == nil)
        #expect(rig.posts.count == 2, "the new waiting notification is a pop-up: it waits for the window")
        #expect(rig.policy.nextDeadline?.offset == .seconds(10))
        rig.advance(by: .seconds(6))
        #expect(rig.posts.count == 3)
        #expect(rig.posts[2].replacing == 0)
        #expect(rig.posts[2].notification.body == "The server did not answer in time (target server).")
        #expect(rig.screenSummary == "Waiting for connectivity…")
    }

    @Test func aFlapStormPostsAtMostOncePerWindowAndEndsOnTheFinalState() {
        var generator = SeededGenerator(seed: 0x5eed)
        for round in 0..<50 {
            let window = Duration.milliseconds(Int64(generator.next() % 20_000) + 500)
            var rig = Rig(minInterval: window)
            var disconnectedNow = false
            var everDisconnected = false
            for _ in 0..<(Int(generator.next() % 300) + 1) {
                rig.advance(by: .milliseconds(Int64(generator.next() % 400)))
                if generator.next() % 2 == 0 {
                    let reasons = ["connection_refused", "timeout", "no_link"]
                    rig.disconnected(reasons[Int(generator.next() % 3)])
                    disconnectedNow = true
                    everDisconnected = true
                    #expect(
                        rig.screenSummary != "Connected",
                        "round \(round): the screen says connected while reachd does not"
                    )
                } else {
                    rig.connected()
                    disconnectedNow = false
                    #expect(
                        rig.screenSummary != "Waiting for connectivity…",
                        "round \(round): the screen says waiting while reachd says connected"
                    )
                }
            }
            // Pop-ups are a window apart; inside a window only a restoration's "Connected" replaces the
            // waiting notification in place.
            var lastCounted: Duration?
            for (index, post) in rig.posts.enumerated() {
                if let lastCounted, post.at - lastCounted < window {
                    let inPlace =
                        post.notification.summary == "Connected" && post.replacing != 0
                        && rig.posts[index - 1].notification.summary == "Waiting for connectivity…"
                    #expect(
                        inPlace,
                        "round \(round): \(post.notification.summary) at \(post.at) inside the window of \(lastCounted)"
                    )
                } else {
                    lastCounted = post.at
                }
            }
            #expect(rig.secondNotifications == 0, "round \(round): one notification at a time")
            rig.advance(by: window)
            #expect(rig.policy.nextDeadline == nil, "round \(round): nothing left waiting")
            if disconnectedNow {
                #expect(rig.lastSummary == "Waiting for connectivity…", "round \(round)")
            } else if everDisconnected {
                #expect(rig.lastSummary == "Connected", "round \(round)")
            } else {
                #expect(rig.posts.isEmpty, "round \(round)")
            }
        }
    }

    @Test func aDismissedWaitingNotificationStaysAwayUntilTheStateChanges() {
        var rig = Rig(minInterval: .seconds(1))
        rig.disconnected()
        rig.dismiss(1)
        #expect(rig.policy.notificationID == 0)
        rig.advance(by: .seconds(5))
        rig.disconnected("timeout")
        rig.advance(by: .seconds(5))
        #expect(rig.posts.count == 1, "the person dismissed it")
        rig.connected()
        #expect(rig.posts.count == 2)
        #expect(rig.posts[1].replacing == 0, "a new notification: the old one is gone")
        #expect(rig.lastSummary == "Connected")
        rig.advance(by: .seconds(5))
        rig.disconnected()
        #expect(rig.posts.count == 3, "a new outage is shown again")
    }

    @Test func closingSomeoneElsesNotificationChangesNothing() {
        var rig = Rig()
        rig.disconnected()
        rig.apply(rig.policy.closed(id: 42, at: rig.now))
        #expect(rig.policy.notificationID == 1)
        rig.apply(rig.policy.actionInvoked(id: 42, action: "check-now", at: rig.now))
        rig.apply(rig.policy.actionInvoked(id: 1, action: "default", at: rig.now))
        #expect(rig.checks == 0)
    }

    @Test func checkNowAsksForACheckAndBringsTheNotificationBackAfterIt() {
        var rig = Rig(minInterval: .seconds(10))
        rig.disconnected()
        rig.advance(by: .seconds(1))
        rig.apply(rig.policy.actionInvoked(id: 1, action: "check-now", at: rig.now))
        #expect(rig.checks == 1)
        // A second click while the check runs asks for nothing more.
        rig.apply(rig.policy.actionInvoked(id: 1, action: "check-now", at: rig.now))
        #expect(rig.checks == 1)
        // The server took it away on the click (dunst does): not a dismissal.
        rig.dismiss(1)
        rig.advance(by: .seconds(1))
        rig.apply(rig.policy.checkFinished(at: rig.now))
        #expect(rig.posts.count == 2, "back at once, inside the window: the person asked")
        #expect(rig.posts[1].at == .seconds(2))
        #expect(rig.posts[1].replacing == 0)
        #expect(rig.lastSummary == "Waiting for connectivity…")
    }

    @Test func aRestartedServerGetsTheWaitingNotificationAgainAtOnce() {
        var rig = Rig(minInterval: .seconds(10))
        rig.disconnected()
        rig.advance(by: .seconds(1))
        rig.apply(rig.policy.serverGone(busLost: false, at: rig.now))
        #expect(rig.policy.notificationID == 0)
        rig.advance(by: .seconds(1))
        rig.apply(rig.policy.serverReady(at: rig.now))
        #expect(rig.posts.count == 2)
        #expect(rig.posts[1].replacing == 0, "the new server never knew the old id")
        #expect(rig.posts[1].at == .seconds(2))
    }

    @Test func aConnectedAlreadyShownIsNotRepeatedForANewServer() {
        var rig = Rig(minInterval: .seconds(1))
        rig.disconnected()
        rig.advance(by: .seconds(2))
        rig.connected()
        rig.apply(rig.policy.serverGone(busLost: true, at: rig.now))
        rig.apply(rig.policy.serverReady(at: rig.now))
        #expect(rig.posts.map { $0.notification.summary } == ["Waiting for connectivity…", "Connected"])
    }

    @Test func nothingIsPostedBeforeTheBusIsReadyThenTheCurrentStateIs() {
        var rig = Rig(ready: false)
        rig.disconnected()
        rig.advance(by: .seconds(60))
        #expect(rig.posts.isEmpty)
        #expect(rig.policy.nextDeadline == nil)
        rig.apply(rig.policy.serverReady(at: rig.now))
        #expect(rig.posts.count == 1)

        // An outage that ended before any server could show it needs no "Connected".
        var other = Rig(ready: false)
        other.disconnected()
        other.connected()
        other.apply(other.policy.serverReady(at: other.now))
        #expect(other.posts.isEmpty)
    }

    @Test func aFailedPostIsRetriedWhenTheWindowEnds() {
        var rig = Rig(minInterval: .seconds(10))
        rig.apply(
            rig.policy.verdict(.init(state: .disconnected, reason: "timeout", target: "server"), at: rig.now),
            failing: true
        )
        #expect(rig.posts.count == 1)
        #expect(rig.policy.notificationID == 0)
        #expect(rig.policy.nextDeadline?.offset == .seconds(10))
        rig.advance(by: .seconds(9))
        #expect(rig.posts.count == 1)
        rig.advance(by: .seconds(1))
        #expect(rig.posts.count == 2)
        #expect(rig.policy.notificationID == 1)
    }

    @Test func aNewOutageWhileConnectedIsStillOnScreenReplacesIt() {
        var rig = Rig(minInterval: .seconds(1))
        rig.disconnected()
        rig.advance(by: .seconds(2))
        rig.connected()
        rig.advance(by: .seconds(2))
        rig.disconnected()
        #expect(rig.posts.map { $0.replacing } == [0, 1, 1])
        // Once "Connected" expired, the next outage is a new notification.
        rig.advance(by: .seconds(2))
        rig.connected()
        rig.dismiss(1)
        rig.advance(by: .seconds(2))
        rig.disconnected()
        #expect(rig.posts.map { $0.replacing } == [0, 1, 1, 1, 0])
    }

    @Test func reasonsReadAsSentences() {
        #expect(
            ConnectivityWording.waitingBody(reason: "connection_refused", target: "server")
                == "The server refused the connection (target server)."
        )
        #expect(
            ConnectivityWording.waitingBody(reason: "no_link", target: nil)
                == "No network connection is active (no cable or Wi-Fi link)."
        )
        #expect(
            ConnectivityWording.waitingBody(reason: "brand_new", target: "api")
                == "The server cannot be reached (brand new) (target api)."
        )
        #expect(
            ConnectivityWording.waitingBody(reason: "timeout", target: "server", fault: nil)
                == "The server did not answer in time (target server).",
            "a fault not known yet is not guessed: the reason alone"
        )
        #expect(
            ConnectivityWording.waitingBody(reason: "timeout", target: "server", fault: "gateway")
                == "Your router is not answering. The server did not answer in time (target server)."
        )
        #expect(
            ConnectivityWording.waitingBody(reason: "timeout", target: "server", fault: "upstream")
                == "The internet connection is down. The server did not answer in time (target server)."
        )
        #expect(
            ConnectivityWording.waitingBody(reason: "http_status", target: "api", fault: "server")
                == "The server is not responding — your network is fine. The server answered with an error (target api)."
        )
        #expect(
            ConnectivityWording.waitingBody(reason: "no_link", target: nil, fault: "link")
                == "No network connection is active (no cable or Wi-Fi link)."
        )
        #expect(ConnectivityWording.waitingIcon(reason: "no_route") == "network-offline")
        #expect(ConnectivityWording.waitingIcon(reason: "timeout") == "network-error")
        #expect(ConnectivityWording.connectedBody(after: .milliseconds(300)) == "The server can be reached again.")
        #expect(ConnectivityWording.connectedBody(after: .seconds(45)) == "The server can be reached again after 45 s.")
        #expect(
            ConnectivityWording.connectedBody(after: .seconds(3 * 3600 + 120))
                == "The server can be reached again after 3 h 2 min."
        )
    }
}
