import Foundation
import ReachTestRigs
import ReachTesting
import Synchronization
import Testing

/// Where screenshots go: `.build/notifications/` of the package, for a person to look at.
let notifyAgentScreenshots = BuiltProducts.packageRoot.appending(path: ".build/notifications")

/// The health endpoint reachd watches: a ``ReachTesting/StandInServer`` answering 200 ("up"), 200
/// 300 ms late ("slow") or 503 ("down") on `/health`, or, as a captive portal does, `302` to
/// ``portalSignInURL`` ("portal"), on a fixed port so that it can be stopped (connection refused) and started again.
/// It keeps every request, so a test can count probes.
final class NotifyAgentTarget: Sendable {
    enum Mode: String {
        case up, slow, down, portal
    }

    static let portalSignInURL = "http://portal.test/login"
    let port: Int
    private let server: StandInServer

    convenience init(port: Int, up: Bool, rig: NotifyAgentRig) async throws {
        try await self.init(port: port, mode: up ? .up : .down, rig: rig)
    }

    init(port: Int, mode: Mode, rig: NotifyAgentRig) async throws {
        self.port = port
        server = try StandInServer(
            name: "health target",
            listen: ["127.0.0.1:\(port)"],
            path: "/health",
            logRequests: true,
            mode: Self.command(mode)
        )
        rig.onStop { [server] in await server.stop() }
        try await server.waitUntilReady()
    }

    private static func command(_ mode: Mode) -> String {
        switch mode {
        case .up: "up"
        case .slow: "slow 0.3"
        case .down: "down"
        case .portal: "redirect \(portalSignInURL)"
        }
    }

    var hits: Int { server.requests.count }

    func set(up: Bool) throws {
        try set(up ? .up : .down)
    }

    /// Switches the mode without waiting: the flap storm sends them as fast as it can.
    func set(_ mode: Mode) throws {
        try server.send(Self.command(mode))
    }

    func stop() async {
        await server.stop()
    }
}

/// A reachd on a fixed API port, watching `http://127.0.0.1:<target>/health`.
final class NotifyAgentReachd: Sendable {
    let apiPort: Int
    private let reachd: ReachdProcess

    /// - Parameter more: More of the configuration, top-level YAML.
    init(targetPort: Int, apiPort: Int, interval: String = "200ms", more: String = "", rig: NotifyAgentRig) async throws
    {
        self.apiPort = apiPort
        let reachd = try ReachdProcess(
            configuration: """
                server:
                  base_url: http://127.0.0.1:\(targetPort)
                  health_path: /health
                probe:
                  interval: \(interval)
                  timeout: 1s
                listen: 127.0.0.1:\(apiPort)
                \(more)
                """,
            in: rig.directory.path,
            listen: nil,
            log: rig.directory.url.appending(path: "reachd-\(UUID().uuidString.prefix(6)).log").path
        )
        self.reachd = reachd
        rig.onStop { await reachd.kill() }
        _ = try await reachd.waitForPort()
    }

    var endpoint: String { "http://127.0.0.1:\(apiPort)" }

    /// The status document's `state`, `since` (when the state last changed), the portal's
    /// `session_ends_at`, and the quality's `state` and `since`, times in seconds since the epoch.
    /// Read off the cooperative pool: the flap storm polls it every 10 ms.
    func status() async throws -> (
        state: String, since: Double, sessionEndsAt: Double?, quality: String?, qualitySince: Double?
    ) {
        let port = apiPort
        let body = try await loopbackGet(port: port, path: "/v1/status").body
        let document = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] ?? [:]
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func seconds(_ value: Any?) -> Double? {
            (value as? String).flatMap(formatter.date(from:))?.timeIntervalSince1970
        }
        let quality = document["quality"] as? [String: Any]
        return (
            document["state"] as? String ?? "", seconds(document["since"]) ?? 0,
            seconds((document["portal"] as? [String: Any])?["session_ends_at"]), quality?["state"] as? String,
            seconds(quality?["since"])
        )
    }

    /// How many verdict changes reachd has published (its `reachd_state_changes_total`).
    func stateChanges() async throws -> Int {
        let port = apiPort
        let metrics = try await loopbackGet(port: port, path: "/metrics").body
        return metrics.split(separator: "\n").filter { $0.hasPrefix("reachd_state_changes_total{") }
            .compactMap { Double($0.split(separator: " ").last ?? "") }.reduce(0) { $0 + Int($1) }
    }

    func stop() async {
        await reachd.kill()
    }
}

/// Everything one test needs: a desktop with dunst, a scratch directory, the agent's log, and every
/// process the test started, all killed (by pid) when the test ends, whether it passed or not.
final class NotifyAgentRig: Sendable {
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
    static func run(_ body: (NotifyAgentRig) async throws -> Void) async throws {
        let directory = try TemporaryDirectory("notify")
        let rig = NotifyAgentRig(desktop: try await PrivateDesktop.start(), directory: directory)
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

    func startAgent(
        endpoint: String,
        minInterval: String,
        options: [String] = [],
        environment: [String: String]? = nil
    ) throws -> ChildProcess {
        track(
            try ChildProcess(
                "reachctl notify-agent",
                executable: BuiltProducts.reachctl,
                arguments: ["--endpoint", endpoint, "notify-agent", "--min-interval", minInterval, "--verbose"]
                    + options,
                errorLog: agentLog.path,
                environment: environment ?? desktop.environment
            )
        )
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

    /// Waits until dunst has answered every post the agent made and shows one, and expects
    /// exactly one on screen (displayed or queued to be).
    func expectOneDisplayed() async throws {
        do {
            try await waitUntil("the agent's posts answered and one shown", timeout: .seconds(10)) {
                let log = agentOutput
                let answered =
                    log.components(separatedBy: " showing \"").count
                    + log.components(separatedBy: " cannot show the notification").count - 2
                let shown = (try? await desktop.displayedCount()) ?? 0
                return answered >= desktop.notifyCalls.count && shown >= 1
            }
        } catch {
            Issue.record("posts: \(desktop.notifyCalls.map(\.summary)); the agent logged:\n\(agentOutput)")
            throw error
        }
        let waiting =
            Int(
                try await desktop.dunstctl(["count", "waiting"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
            ) ?? 0
        #expect(try await desktop.displayedCount() == 1 && waiting == 0, "one notification, not two")
    }

    /// Waits until the agent, after logging `marker`, has handled what came and has nothing
    /// scheduled: from then on only news from reachd or the desktop can change the screen.
    func waitUntilAgentIsIdle(after marker: String, timeout: Duration = .seconds(20)) async throws {
        try await waitUntil("the agent idle after \(marker)", timeout: timeout) {
            let log = agentOutput
            guard let seen = log.range(of: marker, options: .backwards) else { return false }
            let schedules = log[seen.upperBound...].split(separator: "\n").filter {
                $0.contains("nothing scheduled") || $0.contains("next decision in")
            }
            return schedules.last?.contains("nothing scheduled") == true
        }
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
