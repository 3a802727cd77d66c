import Foundation
import ReachTesting
import Synchronization
import Testing

/// The built `reachctl`, next to `reachd`.
private let reachctlPath = reachdBinary.deletingLastPathComponent().appending(path: "reachctl").path

/// Where screenshots go: `.build/notifications/` of the package, for a person to look at.
private let screenshotDirectory = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appending(path: ".build/notifications")

/// The health endpoint reachd watches: answers 200 ("up") or 503 ("down") on `/health`, or, as a
/// captive portal does, `302` to ``portalSignInURL`` ("portal"), switched through stdin, on a fixed
/// port so that it can be stopped (connection refused) and started again. Prints `hit` for every
/// request, so a test can count probes.
private final class HealthTarget: Sendable {
    enum Mode: String {
        case up, down, portal
    }

    static let portalSignInURL = "http://portal.test/login"
    let port: Int
    private let child: ChildProcess

    convenience init(port: Int, up: Bool, rig: Rig) async throws {
        try await self.init(port: port, mode: up ? .up : .down, rig: rig)
    }

    init(port: Int, mode: Mode, rig: Rig) async throws {
        self.port = port
        let script = """
            import http.server, sys, threading
            state = {'mode': '\(mode.rawValue)'}
            class H(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    print('hit', flush=True)
                    if state['mode'] == 'portal':
                        self.send_response(302)
                        self.send_header('Location', '\(Self.portalSignInURL)')
                        self.send_header('Content-Length', '0')
                        self.end_headers()
                        return
                    up = state['mode'] == 'up'
                    body = b'ok' if up else b'down'
                    self.send_response(200 if up and self.path == '/health' else 503)
                    self.send_header('Content-Length', str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *args):
                    pass
            http.server.ThreadingHTTPServer.allow_reuse_address = True
            server = http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), H)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            print('ready', flush=True)
            for line in sys.stdin:
                state['mode'] = line.strip()
                print('now', line.strip(), flush=True)
            """
        let process = try ChildProcess("health target", executable: "/usr/bin/python3", arguments: ["-c", script, "\(port)"])
        child = rig.track(process)
        try await process.waitForLine { $0 == "ready" }
    }

    var hits: Int { child.output.count { $0 == "hit" } }

    func set(up: Bool) throws {
        try set(up ? .up : .down)
    }

    func set(_ mode: Mode) throws {
        try child.writeLine(mode.rawValue)
    }

    func stop() async {
        child.closeInput()
        child.signal(SIGKILL)
        await child.waitForExit()
    }
}

/// A reachd on a fixed API port, watching `http://127.0.0.1:<target>/health`.
private final class Reachd: Sendable {
    let apiPort: Int
    private let child: ChildProcess
    let directory: URL

    /// - Parameter more: More of the configuration, top-level YAML.
    init(targetPort: Int, apiPort: Int, interval: String = "200ms", more: String = "", rig: Rig) async throws {
        self.apiPort = apiPort
        directory = rig.directory.url
        let config = directory.appending(path: "reachd-\(UUID().uuidString.prefix(6)).yaml")
        try """
            server:
              base_url: http://127.0.0.1:\(targetPort)
              health_path: /health
            probe:
              interval: \(interval)
              timeout: 1s
            listen: 127.0.0.1:\(apiPort)
            \(more)
            """.write(to: config, atomically: true, encoding: .utf8)
        child = rig.track(try ChildProcess(
            "reachd", executable: reachdBinary.path, arguments: ["--config", config.path],
            errorLog: directory.appending(path: "reachd.log").path))
        try await waitUntil("reachd answers on \(apiPort)", timeout: .seconds(20)) {
            (try? loopbackGet(port: apiPort, path: "/v1/status", timeout: .seconds(2)))?.status == 200 || !self.child.isRunning
        }
    }

    var endpoint: String { "http://127.0.0.1:\(apiPort)" }

    /// The status document's `state`, `since` (when the state last changed) and the portal's
    /// `session_ends_at`, times in seconds since the epoch.
    func status() throws -> (state: String, since: Double, sessionEndsAt: Double?) {
        let body = try loopbackGet(port: apiPort, path: "/v1/status").body
        let document = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] ?? [:]
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let since = (document["since"] as? String).flatMap(formatter.date(from:))
        let sessionEndsAt = ((document["portal"] as? [String: Any])?["session_ends_at"] as? String).flatMap(formatter.date(from:))
        return (document["state"] as? String ?? "", since?.timeIntervalSince1970 ?? 0, sessionEndsAt?.timeIntervalSince1970)
    }

    /// How many verdict changes reachd has published (its `reachd_state_changes_total`).
    func stateChanges() throws -> Int {
        let metrics = try loopbackGet(port: apiPort, path: "/metrics").body
        return metrics.split(separator: "\n").filter { $0.hasPrefix("reachd_state_changes_total{") }
            .compactMap { Double($0.split(separator: " ").last ?? "") }.reduce(0) { $0 + Int($1) }
    }

    func stop() async {
        child.signal(SIGKILL)
        await child.waitForExit()
    }
}

/// Everything one test needs: a desktop with dunst, a scratch directory, the agent's log, and every
/// process the test started, all killed (by pid) when the test ends, whether it passed or not.
private final class Rig: Sendable {
    let desktop: PrivateDesktop
    let directory: TemporaryDirectory
    private let children = Mutex<[ChildProcess]>([])
    private let stoppers = Mutex<[@Sendable () async -> Void]>([])
    var agentLog: URL { directory.url.appending(path: "agent.log") }

    private init(desktop: PrivateDesktop, directory: TemporaryDirectory) {
        self.desktop = desktop
        self.directory = directory
    }

    /// Runs `body` with a fresh rig, then stops everything in it.
    static func run(_ body: (Rig) async throws -> Void) async throws {
        let directory = try TemporaryDirectory("notify")
        let rig = Rig(desktop: try await PrivateDesktop.start(), directory: directory)
        do {
            try await body(rig)
        } catch {
            await rig.stop()
            throw error
        }
        await rig.stop()
    }

    /// Kills `child` when the test ends.
    func track(_ child: ChildProcess) -> ChildProcess {
        children.withLock { $0.append(child) }
        return child
    }

    /// Runs `stop` when the test ends.
    func onStop(_ stop: @escaping @Sendable () async -> Void) {
        stoppers.withLock { $0.append(stop) }
    }

    /// Starts a desktop portal on this desktop's bus, stopped when the test ends.
    func startDesktopPortal() async throws -> DesktopPortalStandIn {
        let portal = try await DesktopPortalStandIn.start(busAddress: desktop.busAddress)
        onStop { await portal.stop() }
        return portal
    }

    func startAgent(endpoint: String, minInterval: String, options: [String] = [], environment: [String: String]? = nil) throws -> ChildProcess {
        track(try ChildProcess(
            "reachctl notify-agent", executable: reachctlPath,
            arguments: ["--endpoint", endpoint, "notify-agent", "--min-interval", minInterval, "--verbose"] + options,
            errorLog: agentLog.path, environment: environment ?? desktop.environment))
    }

    var agentOutput: String { (try? String(contentsOf: agentLog, encoding: .utf8)) ?? "" }

    /// Waits until `count` Notify calls were seen; returns them.
    func waitForCalls(_ count: Int, timeout: Duration = .seconds(20)) async throws -> [NotifyCall] {
        do {
            try await waitUntil("\(count) Notify call(s)", timeout: timeout) { desktop.notifyCalls.count >= count }
        } catch {
            Issue.record("saw \(desktop.notifyCalls); the agent logged:\n\(agentOutput)")
            throw error
        }
        return desktop.notifyCalls
    }

    /// Waits until dunst shows something, lets a second notification (if any) arrive, and
    /// expects exactly one on screen.
    func expectOneDisplayed() async throws {
        try await waitUntil("dunst shows a notification", timeout: .seconds(10)) { ((try? await desktop.displayedCount()) ?? 0) >= 1 }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await desktop.displayedCount() == 1, "one notification, not two")
    }

    private func stop() async {
        for stop in stoppers.withLock({ $0 }) { await stop() }
        for child in children.withLock({ $0 }) {
            child.closeInput()
            child.signal(SIGKILL)
            await child.waitForExit()
        }
        await desktop.stop()
    }
}

@Suite("reachctl notify-agent on a real desktop", .serialized, .enabled(if: PrivateDesktop.isAvailable, Comment(rawValue: PrivateDesktop.unavailableReason)))
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
            #expect(waiting.body == "The server refused the connection (target server).")
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
            #expect(connected.expireTimeout > 0 && connected.expireTimeout <= 10_000, "brief: \(connected.expireTimeout) ms")
            #expect(connected.hints["category"] == "string \"network.connected\"")
            #expect(connected.hints["transient"] == "boolean true")
            try await rig.expectOneDisplayed()
            try await rig.desktop.screenshot(to: screenshotDirectory.appending(path: "connected.png").path)
            // dunst takes it away by itself.
            try await waitUntil("Connected expired", timeout: .seconds(15)) { (try? await rig.desktop.displayedCount()) == 0 }
            #expect(rig.desktop.notifyCalls.count == 2)
        }
    }

    /// The screen never says "waiting" while reachd says connected: a restoration inside the rate
    /// limit's window replaces the waiting notification at once instead of when the window ends.
    @Test func theWaitingNotificationIsReplacedTheMomentReachdSaysConnected() async throws {
        try await Rig.run { rig in
            let target = try await HealthTarget(port: try freeLoopbackPort(), up: false, rig: rig)
            let reachd = try await Reachd(targetPort: target.port, apiPort: try freeLoopbackPort(), interval: "100ms", rig: rig)
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "6s")
            let waiting = try #require(try await rig.waitForCalls(1).first)
            #expect(waiting.summary == "Waiting for connectivity…")
            try await rig.expectOneDisplayed()

            try target.set(up: true)
            let connected = try await rig.waitForCalls(2, timeout: .seconds(5))[1]
            let status = try reachd.status()
            #expect(status.state == "connected")
            #expect(connected.summary == "Connected")
            #expect(connected.replacesID != 0, "in place of the waiting notification")
            let waitingAt = try #require(waiting.time)
            let replacedAt = try #require(connected.time)
            let latency = Duration.seconds(replacedAt - status.since)
            print("restoration: reachd said connected at \(status.since), the waiting notification was replaced \(latency) later, \(Duration.seconds(replacedAt - waitingAt)) after it was posted (window 6 s)")
            #expect(replacedAt - waitingAt < 6, "inside the window: the case that used to wait for it")
            #expect(latency < .milliseconds(100), "replaced \(latency) after reachd said connected")
            try await rig.expectOneDisplayed()
            // Nothing more when the window ends: the screen already says it.
            try await Task.sleep(until: .now + .seconds(max(0, 6.5 - (replacedAt - waitingAt))))
            #expect(rig.desktop.notifyCalls.count == 2)
        }
    }

    @Test func behindACaptivePortalItAsksToSignInAndOpensTheSignInPage() async throws {
        try await Rig.run { rig in
            let target = try await HealthTarget(port: try freeLoopbackPort(), mode: .portal, rig: rig)
            let reachd = try await Reachd(targetPort: target.port, apiPort: try freeLoopbackPort(), interval: "200ms", rig: rig)
            let portal = try await rig.startDesktopPortal()
            let xdgOpen = try XDGOpenStandIn()
            var environment = rig.desktop.environment
            environment["PATH"] = xdgOpen.searchPath
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "1s", environment: environment)

            let signIn = try #require(try await rig.waitForCalls(1).first)
            #expect(signIn.summary == "Sign in to the network")
            #expect(signIn.body == "Sign in at portal.test to reach the server.")
            #expect(signIn.icon == "dialog-password")
            #expect(signIn.actions == ["default", "Open sign-in page", "open-sign-in", "Open sign-in page", "check-now", "Check now"])
            #expect(signIn.expireTimeout == 0, "persistent while the portal holds the connection")
            #expect(signIn.hints["resident"] == "boolean true")
            try await rig.expectOneDisplayed()
            try FileManager.default.createDirectory(at: screenshotDirectory, withIntermediateDirectories: true)
            try await rig.desktop.screenshot(to: screenshotDirectory.appending(path: "portal.png").path)

            // Clicking the notification (dunst's "do action" invokes `default`): the desktop portal opens the page.
            let action = try await rig.desktop.dunstctl(["action", "0"])
            #expect(action.status == 0, "\(action.output)")
            try await waitUntil("the desktop portal was asked to open the page", timeout: .seconds(5)) { !portal.calls.isEmpty }
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
                answer: #"{"captive": false, "user-portal-url": "https://portal.test/login", "venue-info-url": "https://hotel.example/info", "seconds-remaining": 10}"#)
            rig.onStop { await api.stop() }
            let reachd = try await Reachd(
                targetPort: target.port, apiPort: try freeLoopbackPort(),
                more: "captive_portal:\n  api_url: \(api.url)\n  ca_file: \(ca.certificate)", rig: rig)
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "1s", options: ["--portal-warning", "6s"])

            let warning = try #require(try await rig.waitForCalls(1, timeout: .seconds(15)).first)
            let sessionEndsAt = try #require(try reachd.status().sessionEndsAt)
            #expect(warning.summary == "Network session ends in less than a minute")
            #expect(warning.body == "Sign in again at hotel.example to stay connected.")
            #expect(warning.icon == "appointment-soon")
            #expect(warning.actions == ["default", "Open sign-in page", "open-sign-in", "Open sign-in page"])
            #expect(warning.expireTimeout > 5000 && warning.expireTimeout <= 6000, "gone when the session ends: \(warning.expireTimeout) ms")
            let lead = sessionEndsAt - (try #require(warning.time))
            #expect(abs(lead - 6) < 0.5, "warned \(lead) s before the end")
            try await rig.expectOneDisplayed()
            try FileManager.default.createDirectory(at: screenshotDirectory, withIntermediateDirectories: true)
            try await rig.desktop.screenshot(to: screenshotDirectory.appending(path: "session-ending.png").path)

            try await waitUntil("the warning went with the session", timeout: .seconds(10)) { (try? await rig.desktop.displayedCount()) == 0 }
            try await Task.sleep(for: .seconds(2))
            #expect(rig.desktop.notifyCalls.count == 1, "once per session: \(rig.desktop.notifyCalls.map(\.summary))")
        }
    }

    @Test func checkNowMakesReachdProbeAndTheNotificationComesBack() async throws {
        try await Rig.run { rig in
            let target = try await HealthTarget(port: try freeLoopbackPort(), up: false, rig: rig)
            // Probing once a minute: a probe soon after the click can only be the check's.
            let reachd = try await Reachd(targetPort: target.port, apiPort: try freeLoopbackPort(), interval: "60s", rig: rig)
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "30s")

            let waiting = try #require(try await rig.waitForCalls(1).first)
            #expect(waiting.body == "The server answered with an error (target server).")
            try await Task.sleep(for: .milliseconds(500))
            let hitsBefore = target.hits
            let clicked = ContinuousClock.now
            let action = try await rig.desktop.dunstctl(["action", "0"])
            #expect(action.status == 0, "\(action.output)")
            try await waitUntil("reachd probed again", timeout: .seconds(10)) { target.hits > hitsBefore }
            #expect(ContinuousClock.now - clicked < .seconds(10))
            // Still disconnected: the waiting notification is still there after the click (dunst keeps
            // it; a server that took it away gets it again at once, see NotificationPolicyTests).
            try await waitUntil("the agent heard the check's answer", timeout: .seconds(10)) { rig.agentOutput.contains("check answered") }
            try await rig.expectOneDisplayed()
            #expect(rig.desktop.notifyCalls.last?.summary == "Waiting for connectivity…")
            #expect(rig.agentOutput.contains("Check now"), "\(rig.agentOutput)")
            #expect(rig.agentOutput.contains("check answered: disconnected: http_status (target server)"), "\(rig.agentOutput)")
        }
    }

    /// Pop-ups (the waiting notification) at most once per window; a restoration's "Connected"
    /// replaces it in place at once; never two notifications; the final state at the end.
    @Test func aFlapStormPopsUpAtMostOncePerWindowAndEndsOnTheFinalState() async throws {
        try await Rig.run { rig in
            let target = try await HealthTarget(port: try freeLoopbackPort(), up: false, rig: rig)
            let reachd = try await Reachd(targetPort: target.port, apiPort: try freeLoopbackPort(), interval: "100ms", rig: rig)
            let window = Duration.seconds(3)
            _ = try rig.startAgent(endpoint: reachd.endpoint, minInterval: "3s")
            _ = try await rig.waitForCalls(1)
            let changesBefore = try reachd.stateChanges()

            let stormStart = ContinuousClock.now
            var up = false
            var mostDisplayed = 0
            while ContinuousClock.now - stormStart < .seconds(8) {
                up.toggle()
                try target.set(up: up)
                try await Task.sleep(for: .milliseconds(400))
                mostDisplayed = max(mostDisplayed, try await rig.desktop.displayedCount() ?? 0)
            }
            try target.set(up: false)
            let stormLength = ContinuousClock.now - stormStart
            let flips = try reachd.stateChanges() - changesBefore
            #expect(flips >= 8, "reachd saw a real storm: \(flips) changes")

            // The final state shows once the window ends; then nothing more.
            try await waitUntil("the last post is the waiting one", timeout: .seconds(15)) {
                rig.desktop.notifyCalls.last?.summary == "Waiting for connectivity…" && rig.desktop.notifyCalls.count > 1
            }
            try await Task.sleep(for: window + .seconds(1))
            let calls = rig.desktop.notifyCalls
            print("flap storm: \(flips) verdict changes in \(stormLength) gave \(calls.count) notification posts (window \(window))")
            let allowed = Int((stormLength + window) / window) + 2
            let popUps = calls.count { $0.summary == "Waiting for connectivity…" }
            #expect(popUps <= allowed, "\(popUps) waiting pop-ups for \(flips) changes; at most \(allowed)")
            #expect(calls.count < flips, "rate-limited: \(calls.count) posts for \(flips) changes")
            #expect(calls.filter { $0.summary == "Connected" }.allSatisfy { $0.replacesID != 0 }, "\"Connected\" only ever replaces")
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

            await rig.desktop.killNotificationServer()
            try await Task.sleep(for: .milliseconds(500))
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
            try await waitUntil("dunst shows it", timeout: .seconds(5)) { (try? await rig.desktop.displayedCount()) == 1 }

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
            try await Task.sleep(for: .seconds(2))
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
            try await Task.sleep(for: .seconds(4))
            #expect(agent.isRunning)
            let log = rig.agentOutput
            #expect(log.components(separatedBy: "cannot use the session bus").count - 1 == 1, "warned once:\n\(log)")
            #expect(log.components(separatedBy: "still no session bus").count - 1 >= 2, "retried:\n\(log)")
            #expect(rig.desktop.notifyCalls.isEmpty)
        }
    }
}
