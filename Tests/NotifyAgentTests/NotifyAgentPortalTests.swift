import Foundation
import ReachTestRigs
import ReachTesting
import Synchronization
import Testing

private typealias Rig = NotifyAgentRig
private typealias Reachd = NotifyAgentReachd
private typealias HealthTarget = NotifyAgentTarget
private let screenshotDirectory = notifyAgentScreenshots

/// `reachctl notify-agent` behind a captive portal, on a real desktop: "Sign in to the network"
/// and its action opening the page, and the warning before a portal session ends.
@Suite(
    "reachctl notify-agent behind a captive portal",
    .serialized,
    .enabled(if: PrivateDesktop.isAvailable, Comment(rawValue: PrivateDesktop.unavailableReason))
)
struct NotifyAgentPortalTests {
    @Test func behindACaptivePortalItAsksToSignInAndOpensTheSignInPage() async throws {
        try await Rig.run { rig in
            let target = try await HealthTarget(port: try freeLoopbackPort(), mode: .portal, rig: rig)
            let reachd = try await Reachd(
                targetPort: target.port,
                apiPort: try freeLoopbackPort(),
                interval: "200ms",
                rig: rig
            )
            let portal = try await rig.startDesktopPortal()
            let xdgOpen = try await XDGOpenStandIn()
            var environment = rig.desktop.environment
            environment["PATH"] = xdgOpen.searchPath
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "1s", environment: environment)

            let signIn = try #require(try await rig.waitForCalls(1).first)
            #expect(signIn.summary == "Sign in to the network")
            #expect(signIn.body == "Sign in at portal.test to reach the server.")
            #expect(signIn.icon == "dialog-password")
            #expect(
                signIn.actions == [
                    "default", "Open sign-in page", "open-sign-in", "Open sign-in page", "check-now", "Check now",
                ]
            )
            #expect(signIn.expireTimeout == 0, "persistent while the portal holds the connection")
            #expect(signIn.hints["resident"] == "boolean true")
            try await rig.expectOneDisplayed()
            try FileManager.default.createDirectory(at: screenshotDirectory, withIntermediateDirectories: true)
            try await rig.desktop.screenshot(to: screenshotDirectory.appending(path: "portal.png").path)

            // Clicking the notification (dunst's "do action" invokes `default`): the desktop portal opens the page.
            let action = try await rig.desktop.dunstctl(["action", "0"])
            #expect(action.status == 0, "\(action.output)")
            try await waitUntil("the desktop portal was asked to open the page", timeout: .seconds(5)) {
                !portal.calls.isEmpty
            }
            #expect(portal.calls == [.init(parentWindow: "", uri: HealthTarget.portalSignInURL, optionCount: 0)])
            #expect(xdgOpen.opened.isEmpty)

            // No desktop portal any more: the "Open sign-in page" button runs xdg-open.
            await portal.stop()
            try await rig.expectOneDisplayed()
            try await rig.desktop.chooseAction(key: "open-sign-in")
            try await waitUntil("xdg-open was run", timeout: .seconds(5)) { !xdgOpen.opened.isEmpty }
            #expect(xdgOpen.opened == [HealthTarget.portalSignInURL])
            #expect(portal.calls.count == 1)
            try await waitUntil("the agent logged both", timeout: .seconds(5)) {
                rig.agentOutput.contains("opened \(HealthTarget.portalSignInURL) through the desktop portal")
                    && rig.agentOutput.contains("opened \(HealthTarget.portalSignInURL) through xdg-open")
            }

            // Signed in: "Connected" takes its place.
            try target.set(.up)
            let calls = try await rig.waitForCalls(2)
            #expect(calls[1].summary == "Connected")
            #expect(calls[1].replacesID != 0)
            try await rig.expectOneDisplayed()
        }
    }

    /// The network's RFC 8908 API tells of a signed-in session ending soon: one warning,
    /// `--portal-warning` before the end, gone with the session, not repeated when the API's next
    /// answer moves the end by a few seconds.
    @Test func aPortalSessionsEndIsWarnedOnceBeforeItEnds() async throws {
        try await Rig.run { rig in
            let target = try await HealthTarget(port: try freeLoopbackPort(), up: true, rig: rig)
            let ca = try await PrivateCA.make(in: rig.directory.path)
            let api = try await CaptivePortalAPIServer(
                certificate: try await ca.issue(name: "portal.test"),
                answer:
                    #"{"captive": false, "user-portal-url": "https://portal.test/login", "venue-info-url": "https://hotel.example/info", "seconds-remaining": 10}"#
            )
            rig.onStop { await api.stop() }
            let reachd = try await Reachd(
                targetPort: target.port,
                apiPort: try freeLoopbackPort(),
                more: "captive_portal:\n  api_url: \(api.url)\n  ca_file: \(ca.certificate)",
                rig: rig
            )
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "1s", options: ["--portal-warning", "6s"])

            let warning = try #require(try await rig.waitForCalls(1, timeout: .seconds(15)).first)
            let sessionEndsAt = try #require(try await reachd.status().sessionEndsAt)
            #expect(warning.summary == "Network session ends in less than a minute")
            #expect(warning.body == "Sign in again at hotel.example to stay connected.")
            #expect(warning.icon == "appointment-soon")
            #expect(warning.actions == ["default", "Open sign-in page", "open-sign-in", "Open sign-in page"])
            #expect(
                warning.expireTimeout > 5000 && warning.expireTimeout <= 6000,
                "gone when the session ends: \(warning.expireTimeout) ms"
            )
            let lead = sessionEndsAt - (try #require(warning.time))
            #expect(abs(lead - 6) < 0.5, "warned \(lead) s before the end")
            try await rig.expectOneDisplayed()
            try FileManager.default.createDirectory(at: screenshotDirectory, withIntermediateDirectories: true)
            try await rig.desktop.screenshot(to: screenshotDirectory.appending(path: "session-ending.png").path)

            do {
                try await waitUntil("the warning went with the session", timeout: .seconds(10)) {
                    (try? await rig.desktop.displayedCount()) == 0
                }
            } catch {
                Issue.record(
                    "posts: \(rig.desktop.notifyCalls); dunst: \((try? await rig.desktop.dunstctl(["history"]).output) ?? "?"); the agent logged:\n\(rig.agentOutput)"
                )
                throw error
            }
            // Two more answers of the API, each moving the end by a few seconds, and what reachd made of them: no second warning.
            let asked = api.requests.count
            try await waitUntil("reachd asked the API twice more", timeout: .seconds(20)) {
                api.requests.count >= asked + 2
            }
            #expect(rig.desktop.notifyCalls.count == 1, "once per session: \(rig.desktop.notifyCalls.map(\.summary))")
        }
    }
}
