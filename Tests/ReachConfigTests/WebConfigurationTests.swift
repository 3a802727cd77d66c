import Foundation
import ReachConfig
import ReachSupport
import ReachTesting
import Testing

/// The exporter-toolkit web configuration file (`api.web_config_file`, `--web.config.file`).
@Suite("Configuration: the web configuration file")
struct WebConfigurationTests {
    let directory: TemporaryDirectory
    /// A bcrypt hash as htpasswd writes one (of "s3cret").
    static let hash = "$2y$10$7Wv7bOCDK6lLDe0EJj3.ZOjEhK6tDwIhqaXxP0oYsCMJiZSbnbfGa"

    init() throws {
        directory = try TemporaryDirectory("web-config")
        try "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".write(
            toFile: "\(directory)/server.pem",
            atomically: true,
            encoding: .utf8
        )
        try "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n".write(
            toFile: "\(directory)/server.key",
            atomically: true,
            encoding: .utf8
        )
    }

    /// Writes `web` as the web configuration and parses a configuration naming it (with `extra` lines).
    func parse(web: String, extra: String = "") throws(ConfigurationError) -> DaemonConfiguration {
        let path = "\(directory)/web.yml"
        try? web.write(toFile: path, atomically: true, encoding: .utf8)
        return try DaemonConfiguration.parse(
            "server:\n  base_url: http://127.0.0.1:1\n" + extra,
            source: "t.yaml",
            environment: [:],
            webConfigFile: path
        )
    }

    func problems(web: String, extra: String = "") -> [ConfigurationProblem] {
        do {
            _ = try parse(web: web, extra: extra)
            return []
        } catch {
            return error.problems
        }
    }

    @Test func tlsAndUsersAreReadWithPathsRelativeToTheFile() throws {
        let configuration = try parse(
            web: """
                tls_server_config:
                  cert_file: server.pem
                  key_file: server.key
                  client_auth_type: RequireAndVerifyClientCert
                  client_ca_file: server.pem
                  min_version: TLS13
                basic_auth_users:
                  prometheus: \(Self.hash)
                """
        )
        let web = try #require(configuration.web)
        #expect(web.tls?.certificateFile == "\(directory)/server.pem")
        #expect(web.tls?.clientAuth == .requireAndVerifyClientCert && web.tls?.minimumVersion == .tls13)
        #expect(web.basicAuthUsers["prometheus"]?.revealed == Self.hash)
        #expect(web.authenticatesClients)
    }

    @Test func tls12IsTheOldestUnlessSaidAndNoClientCertificateIsAsked() throws {
        let web = try #require(
            try parse(web: "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n").web
        )
        #expect(web.tls?.minimumVersion == .tls12 && web.tls?.clientAuth == .noClientCert)
        #expect(!web.authenticatesClients)
    }

    @Test func everyProblemNamesTheFileAndTheKey() {
        let found = problems(
            web: """
                tls_server_config:
                  cert_file: server.pem
                  key_file: missing.key
                  min_version: TLS14
                  client_ca_file: server.pem
                  cipher_suites: [TLS_AES_128_GCM_SHA256]
                basic_auth_users:
                  alice: plain-text
                """
        )
        let keys = found.map(\.keyPath)
        #expect(found.allSatisfy { $0.source == "\(directory)/web.yml" }, "\(found)")
        for key in [
            "tls_server_config.key_file", "tls_server_config.min_version", "tls_server_config.client_ca_file",
            "tls_server_config.cipher_suites", "basic_auth_users.alice",
        ] {
            #expect(keys.contains(key), "\(key) in \(found)")
        }
        #expect(
            problems(web: "tls_server_config:\n  key_file: server.key\n").contains {
                $0.message.contains("missing cert_file")
            }
        )
        #expect(
            problems(web: "tls_server_confg: {}\n").contains {
                $0.message.contains("did you mean \"tls_server_config\"")
            }
        )
    }

    @Test func basicAuthUsersMakeAListenerOffLoopbackSafeWithoutAToken() {
        #expect(
            problems(web: "basic_auth_users:\n  prometheus: \(Self.hash)\n", extra: "listen: 0.0.0.0:9780\n").isEmpty
        )
        let unprotected = problems(
            web: "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n",
            extra: "listen: 0.0.0.0:9780\n"
        )
        #expect(
            unprotected.contains { $0.keyPath == "listen" && $0.message.contains("basic_auth_users") },
            "\(unprotected)"
        )
    }
}
