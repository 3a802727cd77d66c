import Foundation
import ReachConfig
import ReachCore
import ReachSupport
import ReachTesting
import Testing

/// Headers, bearer tokens, TLS, address family and gRPC watch mode in the configuration.
@Suite("Configuration: probe options")
struct HTTPOptionsConfigurationTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory("config")
        try "s3cret-token\n".write(toFile: "\(directory)/token", atomically: true, encoding: .utf8)
        try "-----BEGIN CERTIFICATE-----\n".write(toFile: "\(directory)/ca.pem", atomically: true, encoding: .utf8)
    }

    func httpCheck(_ yaml: String, environment: [String: String] = [:]) throws -> HTTPCheck {
        let configuration = try DaemonConfiguration.parse(yaml, source: "t.yaml", environment: environment)
        guard case .http(let check) = try #require(configuration.targets.first).check else {
            Issue.record("not an http target")
            throw CancellationError()
        }
        return check
    }

    @Test func headersTokenAndTLSReachTheCheck() throws {
        let check = try httpCheck(
            """
            targets:
              - name: api
                url: https://10.0.0.1/healthz
                headers: { X-Probe: reachd, X-Tenant: "42" }
                bearer_token_file: \(directory)/token
                tls: { ca_file: \(directory)/ca.pem, server_name: api.internal }
            """
        )
        #expect(
            check.headers == [
                HTTPHeaderField(name: "X-Probe", value: "reachd"), HTTPHeaderField(name: "X-Tenant", value: "42"),
            ]
        )
        #expect(check.bearerToken?.revealed == "s3cret-token", "read from the file, trailing newline trimmed")
        #expect(check.tls == TLSSettings(caFile: "\(directory)/ca.pem", serverName: "api.internal"))
    }

    @Test func theTokenComesFromTheSystemdCredentialsDirectory() throws {
        let yaml = "server:\n  base_url: http://10.0.0.1\n  bearer_token_credential: token\n"
        let check = try httpCheck(yaml, environment: ["CREDENTIALS_DIRECTORY": directory.path])
        #expect(check.bearerToken?.revealed == "s3cret-token")
        expectProblem(yaml, at: "server.bearer_token_credential", line: 3, saying: "$CREDENTIALS_DIRECTORY is not set")
    }

    @Test func tokenProblemsAreReportedAtStartNeverWithTheToken() throws {
        expectProblem(
            "server:\n  base_url: http://h\n  bearer_token_file: /nonexistent/token\n",
            at: "server.bearer_token_file",
            line: 3,
            saying: "cannot read the token"
        )
        let found = problems("server:\n  base_url: http://h\n  headers: { Authorization: Bearer s3cret }\n")
        #expect(found.count == 1)
        #expect(found.first?.message.contains("bearer_token_file") == true)
        #expect(found.first.map { "\($0)".contains("s3cret") } == false, "the problem does not repeat the secret")
    }

    @Test func tlsOptionsAreChecked() {
        expectProblem(
            "server:\n  base_url: https://h\n  tls: { ca_file: /nonexistent.pem }\n",
            at: "server.tls.ca_file",
            line: 3,
            saying: "cannot read the CA bundle"
        )
        expectProblem(
            "server:\n  base_url: https://h\n  tls: { ca_file: /tmp }\n",
            at: "server.tls.ca_file",
            line: 3,
            saying: "is a directory"
        )
        expectProblem(
            "server:\n  base_url: http://h\n  tls: { server_name: x }\n",
            at: "server.tls",
            line: 3,
            saying: "https URLs only"
        )
        expectProblem(
            "server:\n  base_url: https://h\n  tls: { verify: false }\n",
            at: "server.tls.verify",
            line: 3,
            saying: "unknown key"
        )
    }

    @Test func theAddressFamilyDefaultsToAutoAndCanBeSetPerTargetOrForAll() throws {
        let yaml = """
            probe: { address_family: ipv4 }
            targets:
              - { name: a, url: http://h/ }
              - { name: b, url: http://h/, address_family: ipv6 }
            """
        let configuration = try DaemonConfiguration.parse(yaml, source: "t.yaml")
        #expect(configuration.targets.map(\.addressFamily) == [.ipv4, .ipv6])
        #expect(try DaemonConfiguration.parse(oneTarget, source: "t.yaml").targets.first?.addressFamily == .auto)
        expectProblem(
            "probe: { address_family: ip4 }\n" + oneTarget,
            at: "probe.address_family",
            line: 1,
            saying: "did you mean \"ipv4\"?"
        )
    }

    @Test func grpcTargetsMaySpeakTLS() throws {
        let configuration = try DaemonConfiguration.parse(
            """
            targets:
              - { name: plain, kind: grpc, address: "10.0.0.1:50051" }
              - { name: system, kind: grpc, address: "10.0.0.1:50052", tls: {} }
              - { name: private, kind: grpc, address: "10.0.0.1:50053", tls: { ca_file: \(directory)/ca.pem, server_name: grpc.internal } }
            """,
            source: "t.yaml"
        )
        var settings: [TLSSettings?] = []
        for target in configuration.targets {
            if case .grpc(let check) = target.check { settings.append(check.tls) }
        }
        let expected: [TLSSettings?] = [
            nil, TLSSettings(), TLSSettings(caFile: "\(directory)/ca.pem", serverName: "grpc.internal"),
        ]
        #expect(settings == expected)
        #expect(configuration.targets.map(\.usesTLS) == [false, true, true])
        expectProblem(
            "targets:\n  - { name: g, kind: grpc, address: \"h:1\", tls: { verify: false } }\n",
            at: "targets[0].tls.verify",
            line: 2,
            saying: "unknown key"
        )
        expectProblem(
            "targets:\n  - { name: t, kind: tcp, address: \"h:1\", tls: {} }\n",
            at: "targets[0].tls",
            line: 2,
            saying: "https and grpc targets only"
        )
        #expect(problems("targets:\n  - { name: t, kind: tcp, address: \"h:1\", tls: {} }\n").count == 1)
    }

    @Test func grpcTargetsMayWatch() throws {
        let configuration = try DaemonConfiguration.parse(
            "targets:\n  - { name: g, kind: grpc, address: \"10.0.0.1:50051\", watch: true }\n",
            source: "t.yaml"
        )
        guard case .grpc(let check) = configuration.targets.first?.check else {
            Issue.record("not a grpc target")
            return
        }
        #expect(check.watch)
        expectProblem(
            "targets:\n  - { name: g, kind: grpc, address: \"h:1\", watch: sometimes }\n",
            at: "targets[0].watch",
            line: 2,
            saying: "expected true or false"
        )
        expectProblem(
            "targets:\n  - { name: t, kind: tcp, address: \"h:1\", watch: true }\n",
            at: "targets[0].watch",
            line: 2,
            saying: "grpc targets only"
        )
        expectProblem(
            "targets:\n  - { name: t, kind: tcp, address: \"h:1\", headers: { A: b } }\n",
            at: "targets[0].headers",
            line: 2,
            saying: "http targets only"
        )
    }

    @Test func controlCharactersInSecretsAreProblemsThatDoNotQuoteThem() throws {
        expectProblem(
            "server:\n  base_url: http://h\n  headers: { X-Api-Key: \"k3y\\u0001\" }\n",
            at: "server.headers.X-Api-Key",
            line: 3,
            saying: "control character"
        )
        let file = "\(directory)/control-token"
        try "s3cret\u{01}token\n".write(toFile: file, atomically: true, encoding: .utf8)
        let found = problems("server:\n  base_url: http://h\n  bearer_token_file: \(file)\n")
        #expect(found.map(\.message) == ["\(file) holds a control character"])
    }

    @Test func headerNamesAndValuesMustBeSendable() {
        expectProblem(
            "server:\n  base_url: http://h\n  headers: { \"Bad Name\": x }\n",
            at: "server.headers.Bad Name",
            line: 3,
            saying: "not a header name"
        )
        expectProblem(
            "server:\n  base_url: http://h\n  headers: [a]\n",
            at: "server.headers",
            line: 3,
            saying: "expected a mapping of header names"
        )
    }
}

@Suite("Configuration: the status endpoint")
struct ListenConfigurationTests {
    @Test func aNonLoopbackListenAddressNeedsAnAPIToken() throws {
        expectProblem("listen: 0.0.0.0:9780\n" + oneTarget, at: "listen", line: 1, saying: "set api.bearer_token_file")
        let directory = try TemporaryDirectory("api-token")
        let file = "\(directory)/token"
        try "t0ken\n".write(toFile: file, atomically: true, encoding: .utf8)
        let configuration = try DaemonConfiguration.parse(
            "listen: 0.0.0.0:9780\napi: { bearer_token_file: \(file) }\n" + oneTarget,
            source: "t.yaml"
        )
        #expect(configuration.apiToken?.revealed == "t0ken")
        #expect(
            try DaemonConfiguration.parse("listen: \"[::1]:9780\"\n" + oneTarget, source: "t.yaml").apiToken == nil,
            "loopback needs none"
        )
    }

    @Test func anAPISectionWithoutATokenDoesNotOpenANonLoopbackListenAddress() {
        expectProblem(
            "listen: 0.0.0.0:9780\napi: {}\n" + oneTarget,
            at: "listen",
            line: 1,
            saying: "set api.bearer_token_file"
        )
        expectProblem(
            "listen: 0.0.0.0:9780\napi: { idle_timeout: 5s }\n" + oneTarget,
            at: "listen",
            line: 1,
            saying: "set api.bearer_token_file"
        )
        // A token that was given but cannot be read is reported once, where it was given.
        let unreadable = problems("listen: 0.0.0.0:9780\napi: { bearer_token_file: /nonexistent/token }\n" + oneTarget)
        #expect(unreadable.map(\.keyPath) == ["api.bearer_token_file"], "\(unreadable)")
    }

    @Test func aListenOverrideKeepsTheTokenRule() throws {
        var open = try DaemonConfiguration.parse(oneTarget, source: "t.yaml")
        #expect(throws: ConfigurationError.self) { try open.replaceListenAddress(with: "0.0.0.0:9780") }
        try open.replaceListenAddress(with: "127.0.0.1:0")
        #expect(open.listen == HostPort(host: "127.0.0.1", port: 0))
        let directory = try TemporaryDirectory("api-token")
        let file = "\(directory)/token"
        try "t0ken\n".write(toFile: file, atomically: true, encoding: .utf8)
        var guarded = try DaemonConfiguration.parse(
            "api: { bearer_token_file: \(file) }\n" + oneTarget,
            source: "t.yaml"
        )
        try guarded.replaceListenAddress(with: "0.0.0.0:9780")
        #expect(guarded.listen == HostPort(host: "0.0.0.0", port: 9780))
    }

    @Test func aListenOverrideCannotAddKeysOfItsOwn() throws {
        var open = try DaemonConfiguration.parse(oneTarget, source: "t.yaml")
        let injected = "0.0.0.0:9780\"\napi: {bearer_token_file: /etc/hostname}\n#"
        #expect(throws: ConfigurationError.self) { try open.replaceListenAddress(with: injected) }
        #expect(open.listen == HostPort(host: "127.0.0.1", port: 9780))
        #expect(open.apiToken == nil)
    }

    @Test func theIdleTimeoutIsOneMinuteUnlessSet() throws {
        #expect(try DaemonConfiguration.parse(oneTarget, source: "t.yaml").apiIdleTimeout == .seconds(60))
        #expect(
            try DaemonConfiguration.parse("api: { idle_timeout: 5s }\n" + oneTarget, source: "t.yaml").apiIdleTimeout
                == .seconds(5)
        )
        expectProblem(
            "api: { idle_timeout: 100ms }\n" + oneTarget,
            at: "api.idle_timeout",
            line: 1,
            saying: "out of range"
        )
        expectProblem("api: { idle_timeout: 5 }\n" + oneTarget, at: "api.idle_timeout", line: 1, saying: "add a unit")
    }
}

@Suite("Configuration: the gRPC health service")
struct GRPCHealthConfigurationTests {
    @Test func itIsOffUnlessAnAddressIsGiven() throws {
        #expect(try DaemonConfiguration.parse(oneTarget, source: "t.yaml").grpcHealthListen == nil)
        let configuration = try DaemonConfiguration.parse(
            "grpc_health: { listen: \"127.0.0.1:9781\" }\n" + oneTarget,
            source: "t.yaml"
        )
        #expect(configuration.grpcHealthListen == HostPort(host: "127.0.0.1", port: 9781))
        expectProblem(
            "grpc_health: { listen: \"localhost:9781\" }\n" + oneTarget,
            at: "grpc_health.listen",
            line: 1,
            saying: "listens on an IP address"
        )
        expectProblem("grpc_health: {}\n" + oneTarget, at: "grpc_health", line: 1, saying: "missing listen")
    }

    @Test func aNonLoopbackAddressNeedsTheAPIToken() throws {
        expectProblem(
            "grpc_health: { listen: \"0.0.0.0:9781\" }\n" + oneTarget,
            at: "grpc_health.listen",
            line: 1,
            saying: "set api.bearer_token_file"
        )
        let directory = try TemporaryDirectory("api-token")
        let file = "\(directory)/token"
        try "t0ken\n".write(toFile: file, atomically: true, encoding: .utf8)
        let configuration = try DaemonConfiguration.parse(
            "grpc_health: { listen: \"0.0.0.0:9781\" }\napi: { bearer_token_file: \(file) }\n" + oneTarget,
            source: "t.yaml"
        )
        #expect(configuration.grpcHealthListen == HostPort(host: "0.0.0.0", port: 9781))
    }
}

@Suite("Configuration: a targets file")
struct TargetsFileTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory("targets")
    }

    func file(_ text: String) throws -> String {
        let path = "\(directory)/\(UUID().uuidString).txt"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func eachURLBecomesATargetInFileOrderTakenLiterally() throws {
        var configuration = try DaemonConfiguration.parse(oneTarget, source: "t.yaml")
        try configuration.replaceTargets(
            withURLsIn: try file("# two health URLs\n\nhttp://10.0.0.1/health\n  http://[::1]:8080/a%2Fb  \n")
        )
        #expect(configuration.targets.map(\.name) == ["target-1", "target-2"])
        let urls = configuration.targets.map { target -> String? in
            if case .http(let check) = target.check { check.url } else { nil }
        }
        #expect(urls == ["http://10.0.0.1/health", "http://[::1]:8080/a%2Fb"])
    }

    @Test func aProblemNamesTheFilesLine() throws {
        var configuration = try DaemonConfiguration.parse(oneTarget, source: "t.yaml")
        let path = try file("http://10.0.0.1/health\n# comment\nnot a url\"\\x2f\n")
        do {
            try configuration.replaceTargets(withURLsIn: path)
            Issue.record("a bad URL must be a problem")
        } catch {
            #expect(error.problems.map(\.line) == [3], "\(error.problems)")
            #expect(error.problems.first?.source == path)
        }
        let twoBad = try file("ftp://h/\nhttp://10.0.0.1/health\n\nhttp://\n")
        do {
            try configuration.replaceTargets(withURLsIn: twoBad)
            Issue.record("bad URLs must be problems")
        } catch {
            #expect(error.problems.map(\.line) == [1, 4], "every bad URL, each at its own line: \(error.problems)")
        }
        #expect(throws: ConfigurationError.self) {
            try configuration.replaceTargets(withURLsIn: try file("# nothing\n\n"))
        }
        #expect(configuration.targets.map(\.name) == ["a"], "a failed replacement keeps the configured targets")
    }
}
