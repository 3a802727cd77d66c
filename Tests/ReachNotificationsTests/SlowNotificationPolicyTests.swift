import ReachAPI
import ReachCore
import ReachTesting
import Testing

@testable import ReachNotifications

/// "Your connection is slow": off by default, and with `notifySlow` shown while connected with an
/// impaired quality, withdrawn when it is good again, quiet once dismissed until then.
@Suite struct SlowNotificationPolicyTests {
    static let slowBody = "Still connected, but your router answers slowly."

    static func slowRig() -> PolicyRig {
        var rig = PolicyRig()
        rig.policy = Policy(settings: .init(minInterval: .seconds(10), notifySlow: true))
        rig.apply(rig.policy.serverReady(at: rig.clock.now))
        return rig
    }

    static func connected(slow: String?) -> Policy.Verdict {
        .init(state: .connected, reason: "healthy", slowBody: slow)
    }

    @Test func offByDefaultASlowConnectionShowsNothing() {
        var rig = PolicyRig()
        rig.apply(rig.policy.verdict(Self.connected(slow: Self.slowBody), at: rig.now))
        #expect(rig.posts.isEmpty)
    }

    @Test func askedForItIsShownWhileImpairedAndWithdrawnWhenGood() {
        var rig = Self.slowRig()
        rig.apply(rig.policy.verdict(Self.connected(slow: nil), at: rig.now))
        #expect(rig.posts.isEmpty, "connected alone shows nothing")
        rig.advance(by: .seconds(30))
        rig.apply(rig.policy.verdict(Self.connected(slow: Self.slowBody), at: rig.now))
        #expect(rig.posts.count == 1)
        let post = rig.posts[0].notification
        #expect(post.summary == "Your connection is slow")
        #expect(post.body == Self.slowBody)
        #expect(post.urgency == .low)
        #expect(!post.resident)
        #expect(post.actions.isEmpty)
        rig.advance(by: .seconds(30))
        rig.apply(rig.policy.verdict(Self.connected(slow: Self.slowBody), at: rig.now))
        #expect(rig.posts.count == 1, "the same words are not posted again")
        rig.apply(rig.policy.verdict(Self.connected(slow: nil), at: rig.now))
        #expect(rig.closes.count == 1, "good again: it no longer tells the truth")
        #expect(rig.screen == nil)
    }

    @Test func aDisconnectionReplacesItAndDismissedItStaysAwayUntilGoodAgain() {
        var rig = Self.slowRig()
        rig.apply(rig.policy.verdict(Self.connected(slow: Self.slowBody), at: rig.now))
        #expect(rig.screenSummary == "Your connection is slow")
        rig.advance(by: .seconds(30))
        rig.disconnected()
        #expect(rig.screenSummary == "Waiting for connectivity…")
        rig.advance(by: .seconds(30))
        rig.apply(rig.policy.verdict(Self.connected(slow: Self.slowBody), at: rig.now))
        #expect(rig.screenSummary == "Connected", "the restoration first")
        rig.advance(by: .seconds(30))
        #expect(rig.screenSummary == "Your connection is slow", "then the slowness, after the window")
        rig.dismiss(rig.screen?.id ?? 0)
        rig.advance(by: .seconds(30))
        rig.apply(rig.policy.verdict(Self.connected(slow: Self.slowBody), at: rig.now))
        #expect(rig.screen == nil, "dismissed: quiet while it lasts")
        rig.apply(rig.policy.verdict(Self.connected(slow: nil), at: rig.now))
        rig.advance(by: .seconds(30))
        rig.apply(rig.policy.verdict(Self.connected(slow: Self.slowBody), at: rig.now))
        #expect(rig.screenSummary == "Your connection is slow", "a new slow spell is told again")
    }

    @Test func theBodySaysWhereAndHowWithoutValues() {
        #expect(
            ConnectivityWording.slowBody(fault: "gateway", target: "router", measures: ["latency"])
                == "Still connected, but your router answers slowly."
        )
        #expect(
            ConnectivityWording.slowBody(fault: "server", target: "api", measures: ["latency", "loss"])
                == "Still connected, but the server (target api) answers slowly and loses packets."
        )
        #expect(
            ConnectivityWording.slowBody(fault: "link", target: "router", measures: ["loss"])
                == "Still connected, but your Wi-Fi or mobile link loses packets."
        )
    }
}
