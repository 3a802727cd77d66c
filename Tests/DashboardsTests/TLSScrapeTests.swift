import Foundation
import ReachTestRigs
import ReachTesting
import Testing

@Suite("Prometheus scraping reachd over TLS with basic auth")
struct TLSScrapeTests {
    @Test(
        .enabled(if: prometheusPath != nil, "prometheus is not installed (Debian/Ubuntu package prometheus)"),
        .timeLimit(.minutes(3))
    )
    func prometheusScrapesWithThePasswordAndIsRefusedWithAWrongOne() async throws {
        let scratch = try TemporaryDirectory("tls-scrape")
        let health = try await HealthServer()
        defer { health.kill() }
        let web = try await WebConfigFile.make(in: scratch.path)
        let reachd = try ReachdProcess(
            configuration: "targets:\n  - name: api\n    url: \(health.url)\n",
            in: scratch.path,
            arguments: ["--web.config.file=\(web.path)"]
        )
        defer { reachd.signal(SIGKILL) }
        let port = try await reachd.waitForPort()

        // The same scrape, once with the password and once with a wrong one: what an operator
        // writes for node_exporter (scheme https, tls_config.ca_file, basic_auth).
        func job(_ name: String, password: String) -> String {
            """
              - job_name: \(name)
                scheme: https
                tls_config:
                  ca_file: \(web.ca.certificate)
                basic_auth:
                  username: prometheus
                  password: \(password)
                static_configs:
                  - targets: ['127.0.0.1:\(port)']

            """
        }
        let configuration = scratch.url.appending(path: "prometheus.yml")
        try
            ("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
            + job("reachd", password: "scrape-s3cret") + job("wrong-password", password: "guess"))
            .write(to: configuration, atomically: true, encoding: .utf8)
        let (prometheus, api) = try await startPrometheus(
            try #require(prometheusPath),
            configuration: configuration,
            in: scratch.url
        )
        defer { prometheus.signal(SIGKILL) }

        #expect(await eventually(within: .seconds(60)) { await api.hasData(#"reachd_connected{job="reachd"} == 1"#) })
        #expect(await eventually(within: .seconds(30)) { await api.hasData(#"up{job="wrong-password"} == 0"#) })
        // Prometheus says why: reachd answered 401.
        let (_, targets) = try await loopbackGet(port: api.port, path: "/api/v1/targets")
        #expect(targets.contains("401"), "\(targets.prefix(2000))")
    }
}
