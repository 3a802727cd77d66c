import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// `Dashboards/` at the root of the package.
private let dashboardsDirectory = BuiltProducts.packageRoot.appending(path: "Dashboards")
private let dashboardFile = dashboardsDirectory.appending(path: "reachd.json")
private let alertsFile = dashboardsDirectory.appending(path: "reachd-alerts.yaml")

/// Every metric reachd exports (ReachMetrics), with the series names a histogram adds.
private let reachdMetricNames: Set<String> = [
    "reachd_connected", "reachd_state_changes_total", "reachd_link_usable", "reachd_link_up", "reachd_probe_success",
    "reachd_probe_duration_seconds_bucket", "reachd_probe_duration_seconds_sum", "reachd_probe_duration_seconds_count",
    "reachd_probes_total", "reachd_probe_skipped_total", "reachd_restoration_callbacks_total", "reachd_subscribers",
    "reachd_netlink_overruns_total", "reachd_last_transition_timestamp_seconds", "reachd_build_info",
    "reachd_target_certificate_expiry_timestamp_seconds", "reachd_interface_reachable", "reachd_fault",
    "reachd_failing_target",
]

@Suite("Dashboards and alerts against a real Prometheus", .serialized)
struct DashboardPrometheusTests {
    @Test func theDashboardIsImportableAndUsesTheDatasourceVariable() throws {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: dashboardFile)) as? [String: Any]
        )
        #expect((document["schemaVersion"] as? Int ?? 0) >= 36)
        #expect(document["uid"] as? String == "reachd-overview")
        let variables = (document["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        let datasource = variables.first { $0["name"] as? String == "datasource" }
        #expect(datasource?["type"] as? String == "datasource")
        #expect(datasource?["query"] as? String == "prometheus")

        let panels = document["panels"] as? [[String: Any]] ?? []
        let ids = panels.compactMap { $0["id"] as? Int }
        #expect(ids.count == panels.count && Set(ids).count == ids.count, "every panel needs a unique id")
        for panel in panels where panel["type"] as? String != "row" {
            let title = panel["title"] as? String ?? "?"
            #expect((panel["datasource"] as? [String: Any])?["uid"] as? String == "${datasource}", "\(title)")
            let targets = panel["targets"] as? [[String: Any]] ?? []
            #expect(!targets.isEmpty, "\(title) has no query")
            for target in targets {
                #expect((target["datasource"] as? [String: Any])?["uid"] as? String == "${datasource}", "\(title)")
            }
        }

        let expressions = try dashboardExpressions(of: dashboardFile)
        #expect(expressions.count >= 11)
        let metricPattern = /reachd_[a-z_]+/
        for (panel, expr) in expressions {
            let names = expr.matches(of: metricPattern).map { String($0.output) }
            #expect(!names.isEmpty, "\(panel): \(expr) uses no reachd metric")
            for name in names { #expect(reachdMetricNames.contains(name), "\(panel): \(name) is not a reachd metric") }
            #expect(!substitutingGrafanaVariables(expr).contains("$"), "\(panel): \(expr) has an unknown variable")
        }
    }

    @Test(.enabled(if: promtoolPath != nil, "promtool is not installed (Debian/Ubuntu package prometheus)"))
    func theAlertRulesPassPromtool() async throws {
        let check = try await run(try #require(promtoolPath), ["check", "rules", alertsFile.path])
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("SUCCESS"), "\(check.output)")
    }

    @Test(
        .enabled(
            if: prometheusPath != nil && promtoolPath != nil,
            "prometheus and promtool are not installed (Debian/Ubuntu package prometheus)"
        ),
        .timeLimit(.minutes(8))
    )
    func everyPanelHasDataAndEveryRuleEvaluatesAfterADisconnection() async throws {
        let prometheus = try #require(prometheusPath)
        let promtool = try #require(promtoolPath)
        let scratch = try TemporaryDirectory("dashboard")
        let directory = scratch.url
        var children: [ChildProcess] = []
        var reachd: ReachdProcess?
        var health: HealthServer?
        defer {
            for child in children { child.signal(SIGKILL) }
            health?.kill()
            reachd?.signal(SIGKILL)
        }

        // A target that answers 200, an HTTPS one whose certificate (openssl's, from a CA of the
        // test's own) expires in 3 days, and reachd watching both (policy all: the first decides).
        let healthPort = try freeLoopbackPort()
        health = try await HealthServer(port: healthPort)
        let ca = try await PrivateCA.make(in: directory.path)
        let certificate = try await ca.issue(name: "secure.test", days: 3)
        let notAfter = try await PrivateCA.notAfter(of: certificate.certificate)
        let secure = try await LoopbackHTTPSServer(certificate: certificate)
        let config = directory.appending(path: "reachd.yaml")
        try """
        targets:
          - { name: health, url: "\(health?.url ?? "")" }
          - { name: secure, url: "\(secure.url)", tls: { ca_file: \(ca.certificate) } }
        """.write(to: config, atomically: true, encoding: .utf8)
        let daemon = try ReachdProcess(["--config", config.path])
        reachd = daemon
        let reachdPort = try await daemon.waitForPort()

        // Prometheus scraping it every second, with the alert rules loaded.
        let prometheusConfig = directory.appending(path: "prometheus.yml")
        try """
        global:
          scrape_interval: 1s
          scrape_timeout: 1s
          evaluation_interval: 1s
        rule_files:
          - \(alertsFile.path)
        scrape_configs:
          - job_name: reachd
            static_configs:
              - targets: ['127.0.0.1:\(reachdPort)']
        """.write(to: prometheusConfig, atomically: true, encoding: .utf8)
        let (server, api) = try await startPrometheus(prometheus, configuration: prometheusConfig, in: directory)
        children.append(server)

        // Connected, as scraped.
        let connected = await eventually(within: .seconds(60)) {
            await api.hasData(#"reachd_connected{job="reachd"} == 1"#)
        }
        try #require(connected, "Prometheus never saw reachd connected:\n\(server.errors)")

        // Disconnected once the target's server is gone.
        await health?.stop()
        let disconnected = await eventually(within: .seconds(60)) {
            await api.hasData(#"reachd_connected{job="reachd"} == 0"#)
        }
        try #require(disconnected, "Prometheus never saw reachd disconnected")
        // The probe in flight when the server stopped may have been reset; the ones after it are refused.
        #expect(
            await eventually(within: .seconds(30)) {
                await api.hasData(#"reachd_probes_total{job="reachd", result="connection_refused"} > 0"#)
            }
        )

        // Connected again once it is back on the same port.
        health = try await HealthServer(port: healthPort)
        let reconnected = await eventually(within: .seconds(60)) {
            await api.hasData(
                #"reachd_connected{job="reachd"} == 1 and changes(reachd_connected{job="reachd"}[10m]) >= 2"#
            )
        }
        try #require(reconnected, "Prometheus never saw reachd connected again")

        // (a) Every dashboard query returns data. Series born at the reconnection need a couple of
        // scrapes before rate() and increase() see them, hence the wait.
        let expressions = try dashboardExpressions(of: dashboardFile).map {
            (panel: $0.panel, expr: substitutingGrafanaVariables($0.expr))
        }
        #expect(expressions.count >= 11)
        _ = await eventually(within: .seconds(30)) {
            for (_, expr) in expressions where !(await api.hasData(expr)) { return false }
            return true
        }
        for (panel, expr) in expressions {
            let answer = try await api.query(expr)
            #expect(answer.status == "success", "\(panel): \(expr): \(answer.error)")
            #expect(answer.results > 0, "\(panel): \(expr) returned no data: \(answer.raw)")
        }

        // (b) Every rule loaded and evaluates without error, by Prometheus's rule manager and as a query.
        let declared = try String(contentsOf: alertsFile, encoding: .utf8).split(separator: "\n")
            .filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("- alert:") }.count
        let evaluated = await eventually(within: .seconds(30)) {
            let rules = try await api.rules()
            return rules.count == declared && rules.allSatisfy { $0.health != "unknown" }
        }
        let rules = try await api.rules()
        #expect(evaluated, "the rules were not all loaded and evaluated: \(rules.map { "\($0.name): \($0.health)" })")
        #expect(rules.count == declared)
        for expected in [
            "ReachdDisconnected", "ReachdFlapping", "ReachdProbeLatencyHigh", "ReachdCertificateExpiresSoon",
            "ReachdCertificateExpired", "ReachdDown", "ReachdImpaired",
        ] {
            #expect(rules.contains { $0.name == expected }, "no rule \(expected)")
        }
        for rule in rules {
            #expect(rule.health == "ok", "\(rule.name): \(rule.lastError)")
            let answer = try await api.query(rule.query)
            #expect(answer.status == "success", "\(rule.name): \(rule.query): \(answer.error)")
        }

        // (c) The certificate that expires in 3 days, as scraped: the rule fires for it, with the
        // time left as its value, and the expired rule does not.
        let firing =
            #"ALERTS{alertname="ReachdCertificateExpiresSoon", alertstate="firing", target="secure", job="reachd"}"#
        let fired = await eventually(within: .seconds(30)) { await api.hasData(firing) }
        let alerts = try await api.query("ALERTS").raw
        #expect(fired, "ReachdCertificateExpiresSoon never fired: \(alerts)")
        let expiredFires = await api.hasData(#"ALERTS{alertname="ReachdCertificateExpired"}"#)
        #expect(!expiredFires)
        let left = try await api.query(#"reachd_target_certificate_expiry_timestamp_seconds{target="secure"} - time()"#)
        #expect(left.results == 1, "\(left.raw)")
        #expect(
            await api.hasData(
                #"reachd_target_certificate_expiry_timestamp_seconds{target="secure"} == \#(Int(notAfter.timeIntervalSince1970))"#
            )
        )
        #expect(
            await api.hasData(
                #"reachd_target_certificate_expiry_timestamp_seconds{target="secure"} - time() > 2.9 * 86400"#
            ),
            "about 3 days left"
        )
        let plainHasExpiry = await api.hasData(#"reachd_target_certificate_expiry_timestamp_seconds{target="health"}"#)
        #expect(!plainHasExpiry, "plain HTTP presents no certificate")

        // (d) promtool is happy with the rules file and with what reachd serves.
        let rulesCheck = try await run(promtool, ["check", "rules", alertsFile.path])
        #expect(rulesCheck.status == 0, "\(rulesCheck.output)")
        let scrape = try await loopbackGet(port: reachdPort, path: "/metrics")
        #expect(scrape.status == 200)
        #expect(scrape.body.contains("reachd_connected 1"), "\(scrape.body)")
        let metricsCheck = try await run(promtool, ["check", "metrics"], input: scrape.body)
        #expect(metricsCheck.status == 0, "\(metricsCheck.output)")
        await secure.stop()
    }
}
