import Foundation
import ReachTestRigs
import ReachTesting
import Synchronization
import Testing

private typealias Rig = NotifyAgentRig
private typealias Reachd = NotifyAgentReachd
private typealias HealthTarget = NotifyAgentTarget
private let screenshotDirectory = notifyAgentScreenshots

@Suite(
    "reachctl notify-agent on a real desktop",
    .serialized,
    .enabled(if: PrivateDesktop.isAvailable, Comment(rawValue: PrivateDesktop.unavailableReason))
)
struct NotifyAgentTests {
    @Test func waitingWhileRefusedThenOneBriefConnectedInItsPlace() async throws {
        try await Rig.run { rig in
            let targetPort = try freeLoopbackPort()
            let reachd = try await Reachd(targetPort: targetPort, apiPort: try freeLoopbackPort(), rig: rig)
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "2s")

            let waiting = try #require(try await rig.waitForCalls(1).first)
            #expect(waiting.appName == "reachd")
            #expect(waiting.replacesID == 0)
            #expect(waiting.summary == "Waiting for connectivity…")
            #expect(
                waiting.body
                    == "The server is not responding — your network is fine. The server refused the connection (target server)."
            )
            #expect(waiting.icon == "network-error")
            #expect(waiting.expireTimeout == 0, "persistent while waiting")
            #expect(waiting.actions == ["check-now", "Check now"])
            #expect(waiting.hints["urgency"] == "byte 1")
            #expect(waiting.hints["category"] == "string \"network.disconnected\"")
            #expect(waiting.hints["resident"] == "boolean true")
            try await rig.expectOneDisplayed()

            try FileManager.default.createDirectory(at: screenshotDirectory, withIntermediateDirectories: true)
            try await rig.desktop.screenshot(to: screenshotDirectory.appending(path: "waiting.png").path)

            _ = try await HealthTarget(port: targetPort, up: true, rig: rig)
            let calls = try await rig.waitForCalls(2)
            let connected = calls[1]
            #expect(connected.summary == "Connected")
            #expect(connected.replacesID != 0, "replaces the waiting notification")
            #expect(
                connected.expireTimeout > 0 && connected.expireTimeout <= 10_000,
                "brief: \(connected.expireTimeout) ms"
            )
            #expect(connected.hints["category"] == "string \"network.connected\"")
            #expect(connected.hints["transient"] == "boolean true")
            try await rig.expectOneDisplayed()
            try await rig.desktop.screenshot(to: screenshotDirectory.appending(path: "connected.png").path)
            // dunst takes it away by itself.
            try await waitUntil("Connected expired", timeout: .seconds(15)) {
                (try? await rig.desktop.displayedCount()) == 0
            }
            #expect(rig.desktop.notifyCalls.count == 2)
        }
    }

    /// The screen never says "waiting" while reachd says connected: a restoration inside the rate
    /// limit's window replaces the waiting notification at once instead of when the window ends.
    @Test func theWaitingNotificationIsReplacedTheMomentReachdSaysConnected() async throws {
        try await Rig.run { rig in
            let target = try await HealthTarget(port: try freeLoopbackPort(), up: false, rig: rig)
            let reachd = try await Reachd(
                targetPort: target.port,
                apiPort: try freeLoopbackPort(),
                interval: "100ms",
                rig: rig
            )
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "6s")
            let waiting = try #require(try await rig.waitForCalls(1).first)
            #expect(waiting.summary == "Waiting for connectivity…")
            try await rig.expectOneDisplayed()

            try target.set(up: true)
            let connected = try await rig.waitForCalls(2, timeout: .seconds(5))[1]
            let status = try await reachd.status()
            #expect(status.state == "connected")
            #expect(connected.summary == "Connected")
            #expect(connected.replacesID != 0, "in place of the waiting notification")
            let waitingAt = try #require(waiting.time)
            let replacedAt = try #require(connected.time)
            let latency = Duration.seconds(replacedAt - status.since)
            print(
                "restoration: reachd said connected at \(status.since), the waiting notification was replaced \(latency) later, \(Duration.seconds(replacedAt - waitingAt)) after it was posted (window 6 s)"
            )
            #expect(replacedAt - waitingAt < 6, "inside the window: the case that used to wait for it")
            #expect(latency < .milliseconds(100), "replaced \(latency) after reachd said connected")
            try await rig.expectOneDisplayed()
            // Nothing more when the window ends: the screen already says it, and nothing is scheduled to change it.
            try await rig.waitUntilAgentIsIdle(after: "showing \"Connected\"")
            #expect(rig.desktop.notifyCalls.count == 2)
        }
    }

    /// "Your connection is slow" on a real desktop, turned on by its one key (`REACHD_NOTIFY_SLOW=1`):
    /// shown the moment reachd says the quality is impaired (the hysteresis is reachd's: the
    /// window's median past the budget at 3 evaluations in a row), and withdrawn when reachd says
    /// it is good again.
    @Test func yourConnectionIsSlowShowsWhenReachdSaysImpairedAndGoesWhenGood() async throws {
        try await Rig.run { rig in
            let target = try await HealthTarget(port: try freeLoopbackPort(), up: true, rig: rig)
            let reachd = try await Reachd(
                targetPort: target.port,
                apiPort: try freeLoopbackPort(),
                more: "quality: { latency: 100ms, window: 2s }",
                rig: rig
            )
            try await waitUntil("reachd connected with a good quality", timeout: .seconds(20)) {
                let status = try await reachd.status()
                return status.state == "connected" && status.quality == "good"
            }
            var environment = rig.desktop.environment
            environment["REACHD_NOTIFY_SLOW"] = "1"
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "10s", environment: environment)
            try await rig.waitUntilAgentIsIdle(after: "connected to the session bus")
            #expect(rig.desktop.notifyCalls.isEmpty, "connected and good: nothing to say")

            let slowed = Date().timeIntervalSince1970
            try target.set(.slow)
            let slow = try #require(try await rig.waitForCalls(1, timeout: .seconds(20)).first)
            let status = try await reachd.status()
            #expect(status.state == "connected" && status.quality == "impaired")
            #expect(slow.summary == "Your connection is slow")
            #expect(slow.body == "Still connected, but the server (target server) answers slowly.")
            #expect(slow.hints["urgency"] == "byte 0")
            let impairedAt = try #require(status.qualitySince)
            let shownAt = try #require(slow.time)
            print(
                "slow: reachd said impaired \(Duration.seconds(impairedAt - slowed)) after the server slowed (window 2 s, probes every 200 ms, 3 evaluations), the notification came \(Duration.seconds(shownAt - impairedAt)) after that"
            )
            #expect(shownAt - impairedAt < 0.5, "shown \(shownAt - impairedAt) s after reachd said impaired")
            try await rig.expectOneDisplayed()
            try FileManager.default.createDirectory(at: screenshotDirectory, withIntermediateDirectories: true)
            try await rig.desktop.screenshot(to: screenshotDirectory.appending(path: "slow.png").path)

            try target.set(.up)
            try await waitUntil("withdrawn once good again", timeout: .seconds(20)) {
                (try? await rig.desktop.displayedCount()) == 0
            }
            #expect(try await reachd.status().quality == "good")
            #expect(rig.agentOutput.contains("withdrew the notification"), "\(rig.agentOutput)")
            #expect(rig.desktop.notifyCalls.count == 1)
        }
    }

    @Test func checkNowMakesReachdProbeAndTheNotificationComesBack() async throws {
        try await Rig.run { rig in
            let target = try await HealthTarget(port: try freeLoopbackPort(), up: false, rig: rig)
            // Probing once a minute: a probe soon after the click can only be the check's.
            let reachd = try await Reachd(
                targetPort: target.port,
                apiPort: try freeLoopbackPort(),
                interval: "60s",
                rig: rig
            )
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "30s")

            let waiting = try #require(try await rig.waitForCalls(1).first)
            #expect(
                waiting.body
                    == "The server is not responding — your network is fine. The server answered with an error (target server)."
            )
            try await rig.expectOneDisplayed()
            let hitsBefore = target.hits
            let clicked = ContinuousClock.now
            let action = try await rig.desktop.dunstctl(["action", "0"])
            #expect(action.status == 0, "\(action.output)")
            try await waitUntil("reachd probed again", timeout: .seconds(10)) { target.hits > hitsBefore }
            #expect(ContinuousClock.now - clicked < .seconds(10))
            // Still disconnected: the waiting notification is still there after the click (dunst keeps
            // it; a server that took it away gets it again at once, see NotificationPolicyTests).
            try await waitUntil("the agent heard the check's answer", timeout: .seconds(10)) {
                rig.agentOutput.contains("check answered")
            }
            try await rig.expectOneDisplayed()
            #expect(rig.desktop.notifyCalls.last?.summary == "Waiting for connectivity…")
            #expect(rig.agentOutput.contains("Check now"), "\(rig.agentOutput)")
            #expect(
                rig.agentOutput.contains("check answered: disconnected: http_status (target server)"),
                "\(rig.agentOutput)"
            )
        }
    }

    /// Pop-ups (the waiting notification) at most once per window; a restoration's "Connected"
    /// replaces it in place at once; never two notifications; the final state at the end.
    @Test func aFlapStormPopsUpAtMostOncePerWindowAndEndsOnTheFinalState() async throws {
        try await Rig.run { rig in
            let target = try await HealthTarget(port: try freeLoopbackPort(), up: false, rig: rig)
            let reachd = try await Reachd(
                targetPort: target.port,
                apiPort: try freeLoopbackPort(),
                interval: "100ms",
                rig: rig
            )
            let window = Duration.seconds(3)
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "3s")
            _ = try await rig.waitForCalls(1)
            let changesBefore = try await reachd.stateChanges()

            let stormStart = ContinuousClock.now
            var up = false
            var mostDisplayed = 0
            while ContinuousClock.now - stormStart < .seconds(8) {
                up.toggle()
                try target.set(up: up)
                // Each flip lands before the next: reachd says it.
                try await waitUntil("reachd says \(up ? "connected" : "disconnected")", every: .milliseconds(10)) {
                    try await reachd.status().state == (up ? "connected" : "disconnected")
                }
                mostDisplayed = max(mostDisplayed, try await rig.desktop.displayedCount() ?? 0)
            }
            try target.set(up: false)
            let stormLength = ContinuousClock.now - stormStart
            let flips = try await reachd.stateChanges() - changesBefore
            #expect(flips >= 8, "reachd saw a real storm: \(flips) changes")

            // The final state shows once the window ends; then nothing more.
            try await waitUntil("the last post is the waiting one", timeout: .seconds(15)) {
                rig.desktop.notifyCalls.last?.summary == "Waiting for connectivity…"
                    && rig.desktop.notifyCalls.count > 1
            }
            // Then nothing more: the agent has nothing scheduled, and reachd stays disconnected.
            try await rig.waitUntilAgentIsIdle(after: "showing \"Waiting for connectivity…\"")
            let calls = rig.desktop.notifyCalls
            print(
                "flap storm: \(flips) verdict changes in \(stormLength) gave \(calls.count) notification posts (window \(window))"
            )
            let allowed = Int((stormLength + window) / window) + 2
            let popUps = calls.count { $0.summary == "Waiting for connectivity…" }
            #expect(popUps <= allowed, "\(popUps) waiting pop-ups for \(flips) changes; at most \(allowed)")
            #expect(calls.count < flips, "rate-limited: \(calls.count) posts for \(flips) changes")
            #expect(
                calls.filter { $0.summary == "Connected" }.allSatisfy { $0.replacesID != 0 },
                "\"Connected\" only ever replaces"
            )
            #expect(calls.last?.summary == "Waiting for connectivity…")
            #expect(mostDisplayed == 1, "one notification at a time")
            #expect(try await rig.desktop.displayedCount() == 1)
        }
    }

    @Test func aRestartedNotificationServerShowsTheCurrentStateAgain() async throws {
        try await Rig.run { rig in
            let reachd = try await Reachd(targetPort: try freeLoopbackPort(), apiPort: try freeLoopbackPort(), rig: rig)
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "30s")
            _ = try await rig.waitForCalls(1)
            // Shown (dunst answered the post) before dunst dies; killed between the call and its
            // answer, the post would fail instead, another case.
            try await rig.expectOneDisplayed()

            await rig.desktop.killNotificationServer()
            // The agent saw it go (its notification with it) before a new one starts.
            try await waitUntil("the agent saw the server stop") {
                rig.agentOutput.contains("session bus: serverStopped")
            }
            try await rig.desktop.startNotificationServer()
            let calls = try await rig.waitForCalls(2)
            #expect(calls[1].summary == "Waiting for connectivity…")
            #expect(calls[1].replacesID == 0, "a new server: a new notification")
            #expect(calls[1].expireTimeout == 0)
            try await rig.expectOneDisplayed()
        }
    }

    @Test func stoppingTheAgentTakesItsNotificationAway() async throws {
        try await Rig.run { rig in
            let reachd = try await Reachd(targetPort: try freeLoopbackPort(), apiPort: try freeLoopbackPort(), rig: rig)
            let agent = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "1s")
            _ = try await rig.waitForCalls(1)
            try await waitUntil("dunst shows it", timeout: .seconds(5)) {
                (try? await rig.desktop.displayedCount()) == 1
            }

            let stopped = ContinuousClock.now
            agent.signal(SIGTERM)
            await agent.waitForExit(timeout: .seconds(10))
            #expect(ContinuousClock.now - stopped < .seconds(3))
            #expect(agent.terminationStatus == 0, "\(rig.agentOutput)")
            #expect(try await rig.desktop.displayedCount() == 0, "no stale \"Waiting\" once the agent is gone")
        }
    }

    @Test func reachdRestartingIsFollowedAcrossTheGap() async throws {
        try await Rig.run { rig in
            let targetPort = try freeLoopbackPort()
            let apiPort = try freeLoopbackPort()
            let first = try await Reachd(targetPort: targetPort, apiPort: apiPort, rig: rig)
            let agent = try rig.startAgent(endpoint: first.endpoint, minInterval: "1s")
            _ = try await rig.waitForCalls(1)
            await first.stop()
            // Retrying, quietly after the first warning, and still running.
            try await waitUntil("the agent retries") { rig.agentOutput.contains("; retrying in ") || !agent.isRunning }
            #expect(agent.isRunning)

            _ = try await HealthTarget(port: targetPort, up: true, rig: rig)
            _ = try await Reachd(targetPort: targetPort, apiPort: apiPort, rig: rig)
            let calls = try await rig.waitForCalls(2, timeout: .seconds(40))
            #expect(calls[1].summary == "Connected")
            #expect(calls[1].replacesID != 0)
            #expect(rig.agentOutput.contains("reachd answers again"), "\(rig.agentOutput)")
            let warnings = rig.agentOutput.components(separatedBy: "retrying with backoff until it answers").count - 1
            let retries = rig.agentOutput.components(separatedBy: "; retrying in ").count - 1
            #expect(warnings == 1, "one warning for the whole gap:\n\(rig.agentOutput)")
            #expect(retries >= 1, "quiet retries during the gap:\n\(rig.agentOutput)")
        }
    }

    @Test func withoutASessionBusItWarnsOnceAndKeepsTrying() async throws {
        try await Rig.run { rig in
            let reachd = try await Reachd(targetPort: try freeLoopbackPort(), apiPort: try freeLoopbackPort(), rig: rig)
            var environment = rig.desktop.environment
            environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(rig.directory.path)/no-bus-here"
            let agent = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "1s", environment: environment)
            try await waitUntil("two retries for the bus") {
                rig.agentOutput.components(separatedBy: "still no session bus").count - 1 >= 2 || !agent.isRunning
            }
            #expect(agent.isRunning)
            let log = rig.agentOutput
            #expect(log.components(separatedBy: "cannot use the session bus").count - 1 == 1, "warned once:\n\(log)")
            #expect(log.components(separatedBy: "still no session bus").count - 1 >= 2, "retried:\n\(log)")
            #expect(rig.desktop.notifyCalls.isEmpty)
        }
    }
}
