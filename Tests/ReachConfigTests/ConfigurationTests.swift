import Foundation
import Logging
import ReachCore
import ReachSupport
import Testing

@testable import ReachConfig

/// The repository root, found from this file's path.
let repositoryRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

@Suite("Configuration: valid files")
struct ConfigurationTests {
    @Test func theShippedFileWatchesALocalHealthEndpoint() throws {
        let configuration = try DaemonConfiguration.load(
            from: .file(repositoryRoot.appending(path: "config/reachd.yaml").path)
        )
        #expect(configuration.targets.count == 1)
        let server = try #require(configuration.targets.first)
        #expect(server.name == "server")
        #expect(
            server.check
                == .http(
                    HTTPCheck(
                        url: "http://127.0.0.1:8080/api/v1/health",
                        endpoint: HostPort(host: "127.0.0.1", port: 8080)
                    )
                )
        )
        #expect(server.interval == .seconds(1))
        #expect(server.timeout == .seconds(2))
        #expect(server.hysteresis == Hysteresis(failuresBeforeDown: 1, successesBeforeUp: 1))
        #expect(server.coalescing == .milliseconds(50))
        #expect(configuration.policy == .all)
        #expect(configuration.interfaces == InterfaceFilter())
        #expect(configuration.linkSettleWindow == .milliseconds(100))
        #expect(configuration.listen == HostPort(host: "127.0.0.1", port: 9780))
        #expect(configuration.log == LogSettings(target: .auto, level: .info))
    }

    @Test func theEmbeddedDefaultIsTheShippedFile() throws {
        let shipped = try String(contentsOf: repositoryRoot.appending(path: "config/reachd.yaml"), encoding: .utf8)
        #expect(
            DefaultConfiguration.yaml + "\n" == shipped,
            "regenerate Sources/ReachConfig/DefaultConfiguration.swift from config/reachd.yaml"
        )
        #expect(
            try DaemonConfiguration.load(from: .embeddedDefault)
                == DaemonConfiguration.load(from: .file(repositoryRoot.appending(path: "config/reachd.yaml").path))
        )
    }

    @Test func coalescingIsOneSettingForAllTargets() throws {
        let yaml =
            "probe: { coalesce: 0s }\ntargets:\n  - { name: a, url: http://h/ }\n  - { name: b, kind: tcp, address: \"h:1\" }\n"
        #expect(try DaemonConfiguration.parse(yaml, source: "t.yaml").targets.map(\.coalescing) == [.zero, .zero])
        expectProblem(
            "targets:\n  - { name: a, url: http://h/, coalesce: 0s }\n",
            at: "targets[0].coalesce",
            line: 2,
            saying: "unknown key"
        )
        expectProblem(
            "probe: { coalesce: 2m }\nserver: { base_url: http://h }\n",
            at: "probe.coalesce",
            line: 1,
            saying: "out of range"
        )
    }

    @Test func perInterfaceProbingIsOneSettingForAllTargetsAndOffByDefault() throws {
        let yaml = "probe: { per_interface: true }\ntargets:\n  - { name: a, url: http://h/ }\n"
        #expect(try DaemonConfiguration.parse(yaml, source: "t.yaml").variants.perInterface)
        #expect(try DaemonConfiguration.parse(yaml, source: "t.yaml").monitor.variants.perInterface)
        #expect(try !DaemonConfiguration.load(from: .embeddedDefault).variants.perInterface)
        expectProblem(
            "targets:\n  - { name: a, url: http://h/, per_interface: true }\n",
            at: "targets[0].per_interface",
            line: 2,
            saying: "unknown key"
        )
    }

    @Test func theServerShorthandDefaultsItsHealthPath() throws {
        let configuration = try DaemonConfiguration.parse(
            "server:\n  base_url: https://api.example.com/\n",
            source: "t.yaml"
        )
        #expect(configuration.targets.map(\.name) == ["server"])
        #expect(
            configuration.targets[0].check
                == .http(
                    HTTPCheck(
                        url: "https://api.example.com/api/v1/health",
                        endpoint: HostPort(host: "api.example.com", port: 443)
                    )
                )
        )
    }

    @Test func everyKindOfTargetAndOption() throws {
        let yaml = """
            server:
              base_url: http://[::1]:8080/app
              health_path: /healthz
            probe:
              interval: 500ms
              timeout: 1500ms
              failures_before_down: 2
            targets:
              - name: api
                url: https://api.example.com:8443/health
                interval: 1m30s
                successes_before_up: 3
                expect:
                  status: [200, "2xx", "300-302"]
                  json: { pointer: /status, equals: ok }
              - name: quoted-true
                kind: http
                url: http://10.0.0.1/h
                expect:
                  body_contains: "healthy"
                  status: 204
              - name: database
                kind: tcp
                address: db.internal:5432
                timeout: 250ms
              - name: backend
                kind: grpc
                address: "[2001:db8::5]:50051"
                service: grpc.health.v1.Health
            policy: { quorum: 3 }
            interfaces:
              include: [eth*, wlan*]
              exclude: []
              settle_window: 0s
            listen: "[::1]:9999"
            log: { target: stderr, level: debug }
            """
        let configuration = try DaemonConfiguration.parse(yaml, source: "full.yaml")
        #expect(configuration.targets.map(\.name) == ["server", "api", "quoted-true", "database", "backend"])
        let server = configuration.targets[0]
        #expect(
            server.check
                == .http(HTTPCheck(url: "http://[::1]:8080/app/healthz", endpoint: HostPort(host: "::1", port: 8080)))
        )
        #expect(server.interval == .milliseconds(500))
        #expect(server.timeout == .milliseconds(1500))
        #expect(server.hysteresis == Hysteresis(failuresBeforeDown: 2, successesBeforeUp: 1))
        let api = configuration.targets[1]
        #expect(api.interval == .seconds(90))
        #expect(api.hysteresis == Hysteresis(failuresBeforeDown: 2, successesBeforeUp: 3))
        #expect(
            api.check
                == .http(
                    HTTPCheck(
                        url: "https://api.example.com:8443/health",
                        endpoint: HostPort(host: "api.example.com", port: 8443),
                        expectation: HTTPExpectation(
                            statuses: [200...200, 200...299, 300...302],
                            json: JSONExpectation(pointer: "/status", equals: .string("ok"))
                        )
                    )
                )
        )
        guard case .http(let quoted) = configuration.targets[2].check else {
            Issue.record("not http")
            return
        }
        #expect(quoted.expectation == HTTPExpectation(statuses: [204...204], bodyContains: "healthy"))
        #expect(configuration.targets[3].check == .tcp(HostPort(host: "db.internal", port: 5432)))
        #expect(configuration.targets[3].timeout == .milliseconds(250))
        #expect(
            configuration.targets[4].check
                == .grpc(
                    GRPCHealthCheck(
                        endpoint: HostPort(host: "2001:db8::5", port: 50051),
                        service: "grpc.health.v1.Health"
                    )
                )
        )
        #expect(configuration.policy == .quorum(3))
        #expect(configuration.interfaces == InterfaceFilter(include: ["eth*", "wlan*"], exclude: []))
        #expect(configuration.linkSettleWindow == .zero)
        #expect(configuration.listen == HostPort(host: "::1", port: 9999))
        #expect(configuration.log.level == .debug)
    }

    @Test(arguments: [
        ("true", JSONScalar.bool(true)), ("\"true\"", .string("true")), ("42", .number(42)), ("1.5", .number(1.5)),
        ("null", .null), ("~", .null), ("ok", .string("ok")), ("'3'", .string("3")), ("0o17", .number(15)),
        ("0x1F", .number(31)),
    ])
    func jsonExpectationsKeepTheirYAMLType(yaml: String, expected: JSONScalar) throws {
        let configuration = try DaemonConfiguration.parse(
            "targets:\n  - name: a\n    url: http://h/\n    expect:\n      json: { pointer: /x, equals: \(yaml) }\n",
            source: "t"
        )
        guard case .http(let check) = configuration.targets[0].check else {
            Issue.record("not http")
            return
        }
        #expect(check.expectation.json?.equals == expected)
    }

    @Test func aThousandTargetsLoadInOrder() throws {
        let yaml =
            "targets:\n"
            + (0..<1000).map { "  - name: t\($0)\n    kind: tcp\n    address: 10.0.\($0 / 256).\($0 % 256):80\n" }
            .joined()
        let configuration = try DaemonConfiguration.parse(yaml, source: "many.yaml")
        #expect(configuration.targets.count == 1000)
        #expect(configuration.targets.map(\.name) == (0..<1000).map { "t\($0)" })
    }

    @Test func theSourceIsTheCommandLineThenTheEnvironmentThenTheDefault() {
        #expect(
            DaemonConfiguration.Source.resolve(commandLine: "/a.yaml", environment: ["REACHD_CONFIG": "/b.yaml"])
                == .file("/a.yaml")
        )
        #expect(
            DaemonConfiguration.Source.resolve(commandLine: nil, environment: ["REACHD_CONFIG": "/b.yaml"])
                == .file("/b.yaml")
        )
        #expect(
            DaemonConfiguration.Source.resolve(commandLine: nil, environment: ["REACHD_CONFIG": ""]) == .embeddedDefault
        )
        #expect(DaemonConfiguration.Source.resolve(commandLine: nil, environment: [:]) == .embeddedDefault)
    }
}

@Suite("Configuration: suggestions")
struct SuggestionTests {
    @Test func suggestsOnlyPlausibleTypos() {
        let keys = ConfigurationParser.targetKeys
        #expect(Suggestion.closest(to: "timout", in: keys) == "timeout")
        #expect(Suggestion.closest(to: "intreval", in: keys) == "interval")
        #expect(Suggestion.closest(to: "adress", in: keys) == "address")
        #expect(Suggestion.closest(to: "failures_before_dwon", in: keys) == "failures_before_down")
        #expect(Suggestion.closest(to: "colour", in: keys) == nil)
        #expect(Suggestion.closest(to: "x", in: keys) == nil)
    }
}
