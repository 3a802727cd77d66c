import ReachCore
import ReachTesting

@testable import ReachNotifications

typealias Policy = NotificationPolicy<TestClock.Instant>

/// A policy with a clock and a record of every effect, standing in for the bus adapter, and the
/// screen as dunst would show it.
struct PolicyRig {
    let clock = TestClock()
    var policy: Policy
    var posts: [(notification: DesktopNotification, replacing: UInt32, at: Duration)] = []
    var closes: [(id: UInt32, at: Duration)] = []
    var opened: [String] = []
    var checks = 0
    var nextID: UInt32 = 1
    /// What the server shows now: the notification and its id.
    var screen: (id: UInt32, notification: DesktopNotification)?
    /// Posts of a new notification while one of ours was still on screen: two at once.
    var secondNotifications = 0

    init(minInterval: Duration = .seconds(10), portalWarning: Duration = .seconds(300), ready: Bool = true) {
        policy = Policy(
            settings: .init(minInterval: minInterval, connectedFor: .seconds(5), portalWarning: portalWarning)
        )
        if ready { apply(policy.serverReady(at: clock.now)) }
    }

    var now: TestClock.Instant { clock.now }

    /// Carries out effects as the agent does: each post succeeds with a fresh id (unless `failing`);
    /// a close is answered with `NotificationClosed`, as dunst does.
    mutating func apply(_ effects: [Policy.Effect], failing: Bool = false) {
        var effects = effects
        while !effects.isEmpty {
            switch effects.removeFirst() {
            case .post(let notification, let replacing):
                posts.append((notification, replacing, clock.now.offset))
                if replacing == 0, screen != nil { secondNotifications += 1 }
                if failing {
                    effects += policy.postFailed(at: clock.now)
                } else {
                    // Like dunst: a replaced id is kept, if it is still shown.
                    let id = replacing != 0 && screen?.id == replacing ? replacing : nextID
                    if id == nextID { nextID += 1 }
                    screen = (id, notification)
                    effects += policy.posted(id: id, at: clock.now)
                }
            case .close(let id):
                closes.append((id, clock.now.offset))
                if screen?.id == id {
                    screen = nil
                    effects += policy.closed(id: id, at: clock.now)
                }
            case .checkNow:
                checks += 1
            case .open(let url):
                opened.append(url)
            }
        }
    }

    mutating func disconnected(
        _ reason: String = "connection_refused",
        target: String? = "server",
        portal: Policy.Portal? = nil,
        fault: String? = nil
    ) {
        apply(
            policy.verdict(
                .init(state: .disconnected, reason: reason, target: target, portal: portal, fault: fault),
                at: clock.now
            )
        )
    }

    mutating func captive(_ portal: Policy.Portal? = nil) {
        disconnected("captive_portal", target: nil, portal: portal)
    }

    mutating func connected(portal: Policy.Portal? = nil) {
        apply(policy.verdict(.init(state: .connected, reason: "healthy", portal: portal), at: clock.now))
    }

    /// The person (or the server) took notification `id` away.
    mutating func dismiss(_ id: UInt32) {
        if screen?.id == id { screen = nil }
        apply(policy.closed(id: id, at: clock.now))
    }

    /// The person invoked `action` on what is on screen.
    mutating func invoke(_ action: String) {
        apply(policy.actionInvoked(id: screen?.id ?? 0, action: action, at: clock.now))
    }

    /// Advances the clock, ticking at each deadline on the way, as the agent's timer does.
    mutating func advance(by duration: Duration) {
        let end = clock.now.advanced(by: duration)
        while let deadline = policy.nextDeadline, deadline <= end {
            clock.advance(by: clock.now.duration(to: max(deadline, clock.now)))
            apply(policy.tick(at: clock.now))
        }
        clock.advance(by: clock.now.duration(to: end))
    }

    /// `offset` from the start of the test clock.
    func instant(_ offset: Duration) -> TestClock.Instant { clock.now.advanced(by: offset - clock.now.offset) }

    var lastSummary: String? { posts.last?.notification.summary }
    var screenSummary: String? { screen?.notification.summary }
}
