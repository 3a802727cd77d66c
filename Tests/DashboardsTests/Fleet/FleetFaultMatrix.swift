import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// `Dashboards/`'s fleet files, and Alertmanager from the Debian package.
private let dashboards = BuiltProducts.packageRoot.appending(path: "Dashboards")
private let alertmanagerPath = executableOnPath("prometheus-alertmanager") ?? executableOnPath("alertmanager")

/// The fleet's alerting end to end, with the real engines: 20 reachd processes in network
/// namespaces of their own ("hosts") behind the routers of 4 "sites", probing one shared server;
/// a real Prometheus scraping them all (file_sd) with the shipped rules, and a real Alertmanager
/// with the shipped routing and inhibition, delivering to a webhook receiver in the test.
///
/// The rules and the Alertmanager configuration are the shipped files with every duration
/// (`for:`, the disconnection windows, `group_wait`, ...) divided by ``timeScale``, so that the
/// order of events is the one a fleet sees, twelve times faster. Each case reports the time from
/// the fault to its notification.
@Suite(
    "FleetFaultMatrix: a fleet's alerts with a real Prometheus and Alertmanager",
    .serialized,
    .enabled(if: TestNamespace.isAvailable, Comment(rawValue: TestNamespace.unavailableReason)),
    .enabled(
        if: prometheusPath != nil && alertmanagerPath != nil,
        "needs prometheus and prometheus-alertmanager (scripts/test installs them)"
    )
)
struct FleetFaultMatrix {
    /// Shipped durations are divided by this in the test's copies.
    static let timeScale = 12

    @Test(.timeLimit(.minutes(10)))
    func aServerOutagePagesOnceASilentSitePagesItsHostsAndALostLinkOnlyItsHost() async throws {
        let scratch = try TemporaryDirectory("fleet")
        let directory = scratch.url
        let network = try await FleetNetwork.make(sites: 4, hostsPerSite: 5)
        do {
            try await Self.runTheCases(on: network, in: directory)
        } catch {
            await network.tearDown()
            throw error
        }
        await network.tearDown()
    }

    private static func runTheCases(on network: FleetNetwork, in directory: URL) async throws {
        var children: [ChildProcess] = []
        var daemons: [ReachdProcess] = []
        let receiver = try await AlertReceiver()
        defer {
            receiver.stop()
            for child in children { child.signal(SIGKILL) }
            for daemon in daemons { daemon.signal(SIGKILL) }
        }

        // One reachd per host, listening on its management address with a token.
        let token = directory.appending(path: "token").path
        try "fleet-token\n".write(toFile: token, atomically: true, encoding: .utf8)
        chmod(token, 0o600)
        for host in network.hosts {
            daemons.append(
                try ReachdProcess(
                    configuration: """
                        server: { base_url: "http://\(FleetNetwork.serverAddress):\(FleetNetwork.serverPort)", health_path: /health }
                        probe: { interval: 1s, timeout: 2s }
                        interfaces: { exclude: ["mgmt*"] }
                        listen: "\(host.managementAddress):\(FleetNetwork.reachdPort)"
                        api: { bearer_token_file: \(token) }
                        history: { enabled: false }
                        hooks: { restored_dir: \(directory.path)/none, lost_dir: \(directory.path)/none }
                        """,
                    in: directory.path,
                    listen: nil,
                    namespace: network.namespace(of: host),
                    log: directory.appending(path: "reachd-\(host.site)-\(host.number).log").path
                )
            )
        }

        // Alertmanager with the shipped routes, its receivers pointed at the test's.
        let alertmanagerPort = try freeLoopbackPort()
        let alertmanagerConfig = directory.appending(path: "alertmanager.yml")
        try shortened(try String(contentsOf: dashboards.appending(path: "alertmanager.yml"), encoding: .utf8))
            .replacingOccurrences(of: "http://127.0.0.1:9095", with: "http://127.0.0.1:\(receiver.port)")
            .write(to: alertmanagerConfig, atomically: true, encoding: .utf8)
        let alertmanager = try ChildProcess(
            "alertmanager",
            executable: try #require(alertmanagerPath),
            arguments: [
                "--config.file=\(alertmanagerConfig.path)",
                "--storage.path=\(directory.appending(path: "alertmanager").path)",
                "--web.listen-address=127.0.0.1:\(alertmanagerPort)", "--cluster.listen-address=", "--log.level=debug",
            ],
            errorLog: directory.appending(path: "alertmanager.log").path,
            directory: directory.path
        )
        children.append(alertmanager)

        // Prometheus scraping every host over the management network, with the shortened rules.
        var ruleFiles: [String] = []
        for name in ["reachd-alerts.yaml", "reachd-fleet-rules.yaml"] {
            let copy = directory.appending(path: name)
            try shortened(try String(contentsOf: dashboards.appending(path: name), encoding: .utf8)).write(
                to: copy,
                atomically: true,
                encoding: .utf8
            )
            ruleFiles.append(copy.path)
        }
        let targets = (1...network.sites).map { site in
            ["targets": network.hosts.filter { $0.site == site }.map(\.instance), "labels": ["site": "site\(site)"]]
                as [String: Any]
        }
        try JSONSerialization.data(withJSONObject: targets).write(to: directory.appending(path: "targets.json"))
        let prometheusConfig = directory.appending(path: "prometheus.yml")
        try """
        global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }
        rule_files: [\(ruleFiles.map { "'\($0)'" }.joined(separator: ", "))]
        alerting:
          alertmanagers:
            - static_configs: [{ targets: ['127.0.0.1:\(alertmanagerPort)'] }]
        scrape_configs:
          - job_name: reachd
            authorization: { credentials_file: '\(token)' }
            file_sd_configs: [{ files: ['\(directory.appending(path: "targets.json").path)'], refresh_interval: 5s }]
        """.write(to: prometheusConfig, atomically: true, encoding: .utf8)
        let (prometheus, api) = try await startPrometheus(
            try #require(prometheusPath),
            configuration: prometheusConfig,
            in: directory
        )
        children.append(prometheus)

        // Every host connected, as scraped, long enough for the disconnection windows to have a past.
        let hostCount = network.hosts.count
        let connected = await eventually(within: .seconds(90)) {
            await api.hasData("count(reachd_connected == 1) == \(hostCount)")
        }
        let scraped = try await api.query("reachd_connected").raw
        try #require(connected, "not every host connected:\n\(scraped)")
        // ... and for a whole disconnection window: the alerts need "connected before" in it.
        try #require(
            await eventually(within: .seconds(90)) {
                await api.hasData("count(reachd_connected offset \(window.milliseconds)ms == 1) == \(hostCount)")
            }
        )
        var figures: [(case: String, notified: Duration)] = []

        // 1. The shared server stops: the fleet alert notifies once; every host's server alert is inhibited.
        var mark = receiver.notifications.count
        var faultAt = ContinuousClock.now
        try await network.setServer(running: false)
        let fleet = try await firstNotification(receiver, after: mark, timeout: .seconds(120)) {
            $0.status == "firing" && $0.alerts.contains { $0.labels["alertname"] == "ReachdFleetServerDown" }
        }
        figures.append(("the shared server stops", fleet.at - faultAt))
        #expect(fleet.receiver == "reachd-fleet")
        #expect(
            fleet.alerts.map(\.labels["target"]) == ["server"]
                && fleet.alerts.allSatisfy { $0.labels["fault"] == "server" }
        )
        // Every host's own alert is in Alertmanager, firing with fault=server, and inhibited.
        try await waitUntil("every host's server alert inhibited", timeout: .seconds(60), every: .milliseconds(500)) {
            let alerts = try await alertmanagerAlerts(port: alertmanagerPort)
            let hosts = alerts.filter {
                $0.labels["alertname"] == "ReachdDisconnected" && $0.labels["fault"] == "server"
            }
            return hosts.count == hostCount && hosts.allSatisfy(\.inhibited)
        }
        // Alertmanager has flushed every host's group since (its debug log says so), and sent none of them.
        try await waitUntil("every host's group flushed", timeout: .seconds(60), every: .milliseconds(200)) {
            flushedHostGroups(alertmanager, alert: "ReachdDisconnected") >= hostCount
        }
        let afterOutage = receiver.notifications.dropFirst(mark).filter { $0.status == "firing" }
        #expect(afterOutage.count == 1, "one notification for the outage: \(afterOutage.map(\.alerts))")
        try await network.setServer(running: true)
        try await waitUntilAllConnected(api, hostCount)
        // The outage's end is told where its start was, once.
        let resolved = try await firstNotification(receiver, after: mark, timeout: .seconds(90)) {
            $0.status == "resolved" && $0.alerts.contains { $0.labels["alertname"] == "ReachdFleetServerDown" }
        }
        #expect(resolved.receiver == "reachd-fleet")

        // 2. One site's router goes silent: its hosts alert with fault=gateway; no fleet alert.
        let silentSite = 2
        let siteHosts = network.hosts.filter { $0.site == silentSite }
        mark = receiver.notifications.count
        faultAt = ContinuousClock.now
        try await network.setRouterSilent(silentSite, true)
        try await waitUntil(
            "a notification for each of site \(silentSite)'s hosts",
            timeout: .seconds(120),
            every: .milliseconds(50)
        ) {
            Set(firing(receiver, after: mark, alert: "ReachdDisconnected").map { $0.labels["instance"] ?? "" })
                == Set(siteHosts.map(\.instance))
        }
        figures.append(("a site's router goes silent", ContinuousClock.now - faultAt))
        let siteAlerts = firing(receiver, after: mark, alert: "ReachdDisconnected")
        #expect(
            siteAlerts.allSatisfy { $0.labels["fault"] == "gateway" && $0.labels["site"] == "site\(silentSite)" },
            "\(siteAlerts)"
        )
        #expect(
            firing(receiver, after: mark, alert: "ReachdFleetServerDown").isEmpty,
            "a silent site is not the server's fault"
        )
        #expect(!(await api.hasData(#"ALERTS{alertname="ReachdFleetServerDown"}"#)))
        try await network.setRouterSilent(silentSite, false)
        try await waitUntilAllConnected(api, hostCount)

        // 3. One host's link goes down: that host alone alerts, with fault=link.
        let lonely = network.hosts[network.hosts.count - 1]
        mark = receiver.notifications.count
        faultAt = ContinuousClock.now
        try await network.setLink(of: lonely, up: false)
        let lost = try await firstNotification(receiver, after: mark, timeout: .seconds(120)) {
            $0.status == "firing" && $0.alerts.contains { $0.labels["alertname"] == "ReachdDisconnected" }
        }
        figures.append(("one host's link goes down", lost.at - faultAt))
        // No other host is disconnected, nor has an alert pending or firing, in Prometheus.
        #expect(await api.hasData("count(reachd_connected == 0) == 1"))
        let others = try await api.query(#"ALERTS{alertname="ReachdDisconnected", instance!="\#(lonely.instance)"}"#)
        #expect(others.results == 0, "\(others.raw)")
        let hostAlerts = firing(receiver, after: mark, alert: "ReachdDisconnected")
        #expect(hostAlerts.map { $0.labels["instance"] } == [lonely.instance], "\(hostAlerts)")
        #expect(hostAlerts.first?.labels["fault"] == "link")
        #expect(lost.receiver == "reachd-host-notify")

        // No host's server alert reached any receiver, firing or resolved, in the whole run.
        let serverAlerts = receiver.notifications.flatMap(\.alerts).filter {
            $0.labels["scope"] == "host" && $0.labels["fault"] == "server"
        }
        #expect(serverAlerts.isEmpty, "\(serverAlerts)")

        // The fleet dashboard: every panel returns data in this Prometheus.
        let expressions = try dashboardExpressions(of: dashboards.appending(path: "reachd-fleet.json"))
        #expect(expressions.count >= 3)
        for (panel, expr) in expressions {
            let query = substitutingGrafanaVariables(expr)
            let answered = await eventually(within: .seconds(30)) { await api.hasData(query) }
            let answer = try await api.query(query).raw
            #expect(answered, "\(panel): \(query) returns no data: \(answer)")
        }
        try await network.setLink(of: lonely, up: true)

        for figure in figures {
            print(
                "fleet: \(figure.case): notified \(String(format: "%.1f", figure.notified.seconds)) s after the fault"
            )
        }
    }

    /// The shipped disconnection window (2 minutes), scaled.
    static var window: Duration { .seconds(120) / timeScale }

    /// How many groups of `alert` Alertmanager has flushed (`msg=flushing` in its debug log), one
    /// per host: whether it then sent or withheld them, the moment has passed.
    private static func flushedHostGroups(_ alertmanager: ChildProcess, alert: String) -> Int {
        let lines = alertmanager.errors.split(separator: "\n").filter {
            $0.contains("msg=flushing") && $0.contains("alertname=\\\"\(alert)\\\"")
        }
        return Set(lines.compactMap { $0.firstMatch(of: /instance=\\"([^\\]+)\\"/).map { String($0.output.1) } }).count
    }

    /// `text` with every duration of a rule or a route divided by ``timeScale``: `for:`, range
    /// selectors, `offset`, `group_wait`, `group_interval`, `repeat_interval`.
    static func shortened(_ text: String) -> String {
        let pattern = /(for: |\[|offset |group_wait: |group_interval: |repeat_interval: )(\d+)(ms|s|m|h|d)/
        return text.replacing(pattern) { match in
            let unit: Int =
                switch match.output.3 {
                case "ms": 1
                case "s": 1000
                case "m": 60_000
                case "h": 3_600_000
                default: 86_400_000
                }
            let milliseconds = max(1, Int(match.output.2)! * unit / timeScale)
            return "\(match.output.1)\(milliseconds)ms"
        }
    }

    private static func firstNotification(
        _ receiver: AlertReceiver,
        after mark: Int,
        timeout: Duration,
        _ matching: @escaping @Sendable (AlertReceiver.Notification) -> Bool
    ) async throws -> AlertReceiver.Notification {
        try await waitFor("the notification", timeout: timeout, every: .milliseconds(50)) {
            receiver.notifications.dropFirst(mark).first(where: matching)
        }
    }

    /// The firing alerts named `alert` in the notifications after `mark`.
    private static func firing(
        _ receiver: AlertReceiver,
        after mark: Int,
        alert: String
    ) -> [(labels: [String: String], status: String)] {
        receiver.notifications.dropFirst(mark).filter { $0.status == "firing" }.flatMap(\.alerts)
            .filter { $0.labels["alertname"] == alert && $0.status == "firing" }
    }

    private static func waitUntilAllConnected(_ api: PrometheusAPI, _ hostCount: Int) async throws {
        try #require(
            await eventually(within: .seconds(90)) { await api.hasData("count(reachd_connected == 1) == \(hostCount)") }
        )
        // No alert of the last case is still firing, in Prometheus.
        try #require(
            await eventually(within: .seconds(90)) {
                !(await api.hasData(#"ALERTS{alertname=~"ReachdDisconnected|ReachdFleetServerDown"}"#))
            }
        )
    }

    /// Alertmanager's alerts (`/api/v2/alerts`): labels, and whether an inhibition holds it.
    private static func alertmanagerAlerts(port: Int) async throws -> [(labels: [String: String], inhibited: Bool)] {
        let answer = try await loopbackGet(port: port, path: "/api/v2/alerts")
        let alerts = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [[String: Any]] ?? []
        return alerts.map { alert in
            let status = alert["status"] as? [String: Any] ?? [:]
            return (alert["labels"] as? [String: String] ?? [:], !((status["inhibitedBy"] as? [String]) ?? []).isEmpty)
        }
    }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    fileprivate var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
