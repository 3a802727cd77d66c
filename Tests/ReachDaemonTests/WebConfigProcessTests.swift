import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// reachd with an exporter-toolkit web configuration file (`--web.config.file`), as a process,
/// asked by curl and openssl: clients nobody here wrote.
@Suite("TLS and basic auth on reachd's listener", .serialized)
struct WebConfigProcessTests {
    /// reachd watching a healthy server, with `web` as its web configuration; and its port.
    private static func start(
        _ web: WebConfigFile,
        watching server: HealthServer,
        in directory: TemporaryDirectory
    ) async throws -> (ReachdProcess, Int) {
        let reachd = try ReachdProcess(
            configuration: "targets:\n  - name: api\n    url: \(server.url)\n",
            in: directory.path,
            arguments: ["--web.config.file=\(web.path)"]
        )
        return (reachd, try await reachd.waitForPort())
    }

    @Test func theStatusPageAndEventsAnswerOverTLSWithAPasswordAndPlainHTTPGetsNothing() async throws {
        let directory = try TemporaryDirectory("web-tls")
        let server = try await HealthServer()
        defer { server.kill() }
        let web = try await WebConfigFile.make(in: directory.path)
        let (reachd, port) = try await Self.start(web, watching: server, in: directory)
        defer { reachd.signal(SIGKILL) }
        let base = "https://127.0.0.1:\(port)"

        let page = try await web.curl([
            "--user", "prometheus:scrape-s3cret", "--write-out", "\n%{http_code}", "\(base)/",
        ])
        #expect(page.output.hasSuffix("\n200"), "\(page.output)\(page.errors)")
        #expect(page.output.contains("<html"), "the status page: \(page.output.prefix(200))")

        // The event stream sends the current status at once; curl stops reading after a second.
        let events = try await web.curl([
            "--user", "prometheus:scrape-s3cret", "--no-buffer", "--max-time", "2", "\(base)/v1/events",
        ])
        #expect(
            events.output.contains("event: verdict") && events.output.contains("data: {"),
            "\(events.output)\(events.errors)"
        )

        // A wrong password and none at all: 401 with a Basic challenge, as exporter-toolkit answers.
        for credentials in [["--user", "prometheus:wrong"], []] {
            let refused = try await web.curl(credentials + ["--include", "\(base)/v1/status"])
            #expect(refused.output.hasPrefix("HTTP/1.1 401"), "\(refused.output)")
            #expect(
                refused.output.lowercased().contains("www-authenticate: basic realm=\"reachd\""),
                "\(refused.output)"
            )
        }
        // The liveness check stays open, as under the bearer token.
        let health = try await web.curl(["--write-out", "%{http_code}", "--output", "/dev/null", "\(base)/healthz"])
        #expect(health.output == "200", "\(health.output)\(health.errors)")

        // Plain HTTP on the same port: no HTTP answer at all.
        let plain = try? await loopbackGet(port: port, path: "/v1/status", timeout: .seconds(3))
        #expect(plain == nil, "plain HTTP was answered: \(String(describing: plain))")
        let plainCurl = try await runProgram(
            "/usr/bin/curl",
            ["--silent", "--max-time", "5", "--write-out", "%{http_code}", "http://127.0.0.1:\(port)/healthz"]
        )
        #expect(
            plainCurl.status != 0 && plainCurl.output.hasSuffix("000"),
            "curl over plain HTTP: \(plainCurl.status) \(plainCurl.output)"
        )
        #expect(reachd.isRunning)
    }

    @Test func mutualTLSRefusesAClientWithoutACertificateFromTheClientCA() async throws {
        let directory = try TemporaryDirectory("web-mtls")
        let server = try await HealthServer()
        defer { server.kill() }
        let web = try await WebConfigFile.make(in: directory.path, users: [:], clientAuth: "RequireAndVerifyClientCert")
        let (reachd, port) = try await Self.start(web, watching: server, in: directory)
        defer { reachd.signal(SIGKILL) }
        let url = "https://127.0.0.1:\(port)/v1/status"

        let anonymous = try await web.curl([url])
        #expect(
            anonymous.status != 0 && !anonymous.output.contains("state"),
            "without a certificate: \(anonymous.status) \(anonymous.output)"
        )
        // A certificate from another CA is refused too.
        let elsewhere = try TemporaryDirectory("web-mtls-other")
        let strangers = try await PrivateCA.make(in: elsewhere.path)
        let stranger = try await strangers.issue(name: "stranger")
        let foreign = try await web.curl(["--cert", stranger.certificate, "--key", stranger.key, url])
        #expect(
            foreign.status != 0 && !foreign.output.contains("state"),
            "with a foreign certificate: \(foreign.status) \(foreign.output)"
        )

        let client = try await web.clientCertificate()
        let known = try await web.curl(["--cert", client.certificate, "--key", client.key, url])
        #expect(known.status == 0 && known.output.contains("\"state\""), "\(known.output)\(known.errors)")
    }

    @Test func aBadWebConfigurationFailsTheCheckWith78NamingTheKey() async throws {
        let directory = try TemporaryDirectory("web-bad")
        let web = try await WebConfigFile.make(in: directory.path)
        let configuration = directory.url.appending(path: "reachd.yaml").path
        try "targets:\n  - name: api\n    url: http://127.0.0.1:1/\napi:\n  web_config_file: \(web.path)\n".write(
            toFile: configuration,
            atomically: true,
            encoding: .utf8
        )
        let good = try await ReachdProcess(["--check-config", configuration]).finish()
        #expect(good.status == 0 && good.output.contains("ok"), "\(good.output)")

        let original = try String(contentsOfFile: web.path, encoding: .utf8)
        let cases: [(String, String)] = [
            (
                original.replacingOccurrences(
                    of: "tls_server_config:\n",
                    with: "tls_server_config:\n  min_version: TLS14\n"
                ), "tls_server_config.min_version"
            ),
            (
                original.replacingOccurrences(
                    of: web.server.key,
                    with: web.ca.certificate.replacingOccurrences(of: "ca.pem", with: "ca.key")
                ), "tls_server_config.key_file"
            ),
            (original + "  alice: not-a-hash\n", "basic_auth_users.alice"),
        ]
        for (text, key) in cases {
            try text.write(toFile: web.path, atomically: true, encoding: .utf8)
            let checked = try await ReachdProcess(["--check-config", configuration]).finish()
            #expect(checked.status == 78, "\(key): \(checked.output)")
            #expect(
                checked.output.contains("\(web.path):") && checked.output.contains(key),
                "\(key): \(checked.output)"
            )
        }
    }

    @Test func aSIGHUPReadsTheFileAgainAndTheNewPasswordWorks() async throws {
        let directory = try TemporaryDirectory("web-reload")
        let server = try await HealthServer()
        defer { server.kill() }
        let web = try await WebConfigFile.make(in: directory.path)
        let (reachd, port) = try await Self.start(web, watching: server, in: directory)
        defer { reachd.signal(SIGKILL) }
        let status = { (password: String) in
            try await web.curl([
                "--user", "prometheus:\(password)", "--write-out", "%{http_code}", "--output", "/dev/null",
                "https://127.0.0.1:\(port)/v1/status",
            ]).output
        }
        #expect(try await status("scrape-s3cret") == "200")

        try await web.write(users: ["prometheus": "rotated-s3cret"])
        reachd.signal(SIGHUP)
        try await reachd.waitForLog(containing: "configuration reloaded")
        #expect(try await status("rotated-s3cret") == "200")
        #expect(try await status("scrape-s3cret") == "401")
    }
}
