import Foundation
import ReachConfig
import ReachCore
import ReachTesting
import Testing

/// Parses `yaml` expecting failure; returns the problems.
func problems(_ yaml: String, source: String = "bad.yaml") -> [ConfigurationProblem] {
    do {
        _ = try DaemonConfiguration.parse(yaml, source: source)
        Issue.record("expected problems in:\n\(yaml)")
        return []
    } catch {
        return error.problems
    }
}

/// Asserts exactly one problem, at `keyPath` and `line`, whose message contains `fragment`.
func expectProblem(
    _ yaml: String,
    at keyPath: String,
    line: Int?,
    saying fragment: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let found = problems(yaml)
    #expect(found.count == 1, "expected one problem, found: \(found)", sourceLocation: sourceLocation)
    guard let problem = found.first else { return }
    #expect(problem.keyPath == keyPath, sourceLocation: sourceLocation)
    #expect(problem.line == line, "\(problem)", sourceLocation: sourceLocation)
    #expect(problem.message.contains(fragment), "\(problem.message)", sourceLocation: sourceLocation)
}

let oneTarget = "targets:\n  - name: a\n    url: http://h/\n"

@Suite("Configuration: every class of problem")
struct ConfigurationProblemTests {
    @Test func aReversedBracketRangeInAnInterfaceGlobIsNamed() throws {
        expectProblem(
            "interfaces: { exclude: [\"eth[9-0]\"] }\n" + oneTarget,
            at: "interfaces.exclude",
            line: 1,
            saying: "reversed range 9-0"
        )
        expectProblem(
            "interfaces: { include: [\"wl[!z-a]*\"] }\n" + oneTarget,
            at: "interfaces.include",
            line: 1,
            saying: "reversed range z-a"
        )
        let fine = try DaemonConfiguration.parse(
            "interfaces: { include: [\"br-*\", \"wl[a-z]n*\", \"x[-]\", \"[\"] }\n" + oneTarget,
            source: "t.yaml"
        )
        #expect(fine.interfaces.include == ["br-*", "wl[a-z]n*", "x[-]", "["])
    }

    @Test func aBaseURLWithAFragmentAndAnEmptyStatusListAreNamed() {
        expectProblem(
            "server: { base_url: \"https://app.example.com/#/\" }\n",
            at: "server.base_url",
            line: 1,
            saying: "cannot have a fragment"
        )
        expectProblem(
            oneTarget + "    expect: { status: [] }\n",
            at: "targets[0].expect.status",
            line: 4,
            saying: "at least one status"
        )
    }

    @Test func yamlSyntaxErrorsNameTheLine() {
        expectProblem("server:\n  base_url: [unclosed\nlog: {}\n", at: "", line: 3, saying: "YAML syntax error")
    }

    @Test func duplicateKeysAreErrors() {
        expectProblem(
            "server:\n  base_url: http://a/\n  base_url: http://b/\n",
            at: "",
            line: 2,
            saying: "duplicate key \"base_url\""
        )
    }

    @Test func theDocumentMustBeAMapping() {
        expectProblem("- a\n- b\n", at: "", line: 1, saying: "expected a mapping")
    }

    @Test func anEmptyDocumentHasNothingToWatch() {
        expectProblem("", at: "", line: nil, saying: "nothing to watch")
        expectProblem("# only comments\n", at: "", line: nil, saying: "nothing to watch")
    }

    @Test func unknownKeysSuggestTheClosestKnownKey() {
        expectProblem(
            oneTarget + "    timout: 3s\n",
            at: "targets[0].timout",
            line: 4,
            saying: "did you mean \"timeout\"?"
        )
        expectProblem("sever:\n  base_url: http://h/\n", at: "sever", line: 1, saying: "did you mean \"server\"?")
        expectProblem(
            oneTarget + "probe:\n  intervall: 1s\n",
            at: "probe.intervall",
            line: 5,
            saying: "did you mean \"interval\"?"
        )
    }

    @Test func unknownKeysWithoutAnyCloseMatchListTheKnownKeys() {
        expectProblem(oneTarget + "colour: blue\n", at: "colour", line: 4, saying: "known keys: server, probe, targets")
    }

    @Test func wrongTypesSayWhatWasExpectedAndFound() {
        expectProblem(oneTarget + "probe:\n  interval: [1s]\n", at: "probe.interval", line: 5, saying: "found a list")
        expectProblem("targets:\n  name: a\n", at: "targets", line: 2, saying: "expected a list, found a mapping")
        expectProblem(
            oneTarget + "    failures_before_down: three\n",
            at: "targets[0].failures_before_down",
            line: 4,
            saying: "whole number from 1 to 100"
        )
        expectProblem(
            oneTarget + "    failures_before_down: 0\n",
            at: "targets[0].failures_before_down",
            line: 4,
            saying: "whole number from 1 to 100"
        )
        expectProblem(oneTarget + "    timeout:\n", at: "targets[0].timeout", line: 4, saying: "found no value")
    }

    @Test func durationsNeedAUnitAndARange() {
        expectProblem(
            oneTarget + "    interval: 1\n",
            at: "targets[0].interval",
            line: 4,
            saying: "add a unit: 1s or 1ms"
        )
        expectProblem(
            oneTarget + "    interval: soon\n",
            at: "targets[0].interval",
            line: 4,
            saying: "is not a duration"
        )
        expectProblem(
            oneTarget + "    interval: 10ms\n",
            at: "targets[0].interval",
            line: 4,
            saying: "out of range: expected from 100ms to 1h"
        )
        expectProblem(oneTarget + "    timeout: 10m\n", at: "targets[0].timeout", line: 4, saying: "out of range")
    }

    @Test func requiredKeysAreNamed() {
        expectProblem("targets:\n  - url: http://h/\n", at: "targets[0]", line: 2, saying: "missing name")
        expectProblem("targets:\n  - name: a\n    kind: http\n", at: "targets[0]", line: 2, saying: "missing url")
        expectProblem("targets:\n  - name: a\n    kind: tcp\n", at: "targets[0]", line: 2, saying: "missing address")
        expectProblem("targets:\n  - name: a\n    address: h:1\n", at: "targets[0]", line: 2, saying: "missing kind")
        expectProblem("server:\n  health_path: /h\n", at: "server", line: 2, saying: "missing base_url")
    }

    @Test func choicesSuggestTheIntendedWord() {
        expectProblem(
            "targets:\n  - name: a\n    kind: htp\n    url: http://h/\n",
            at: "targets[0].kind",
            line: 3,
            saying: "did you mean \"http\"?"
        )
        expectProblem(oneTarget + "policy: anny\n", at: "policy", line: 4, saying: "did you mean \"any\"?")
        expectProblem(
            oneTarget + "log:\n  level: warn\n",
            at: "log.level",
            line: 5,
            saying: "is not one of trace, debug, info"
        )
        expectProblem(oneTarget + "log:\n  target: syslog\n", at: "log.target", line: 5, saying: "is not one of stderr")
    }

    @Test func urlsMustBeProbeableHTTP() {
        expectProblem(
            "targets:\n  - name: a\n    url: ftp://h/\n",
            at: "targets[0].url",
            line: 3,
            saying: "use http or https"
        )
        expectProblem(
            "targets:\n  - name: a\n    url: http:///x\n",
            at: "targets[0].url",
            line: 3,
            saying: "has no host"
        )
        expectProblem(
            "targets:\n  - name: a\n    url: https://user:secret@h/\n",
            at: "targets[0].url",
            line: 3,
            saying: "credentials do not belong in the URL"
        )
        expectProblem(
            "targets:\n  - name: a\n    url: http://h:70000/\n",
            at: "targets[0].url",
            line: 3,
            saying: "out of range"
        )
        expectProblem(
            "targets:\n  - name: a\n    url: not a url\n",
            at: "targets[0].url",
            line: 3,
            saying: "is not a URL"
        )
        expectProblem(
            "server:\n  base_url: http://h/?x=1\n",
            at: "server.base_url",
            line: 2,
            saying: "cannot have a query"
        )
        expectProblem(
            "server:\n  base_url: http://h\n  health_path: health\n",
            at: "server.health_path",
            line: 3,
            saying: "must start with \"/\""
        )
    }

    @Test func addressesNeedHostAndPort() {
        expectProblem(
            "targets:\n  - name: a\n    kind: tcp\n    address: db.internal\n",
            at: "targets[0].address",
            line: 4,
            saying: "host:port"
        )
        expectProblem(
            "targets:\n  - name: a\n    kind: tcp\n    address: 2001:db8::1:80\n",
            at: "targets[0].address",
            line: 4,
            saying: "in brackets"
        )
        expectProblem(
            "targets:\n  - name: a\n    kind: tcp\n    address: h:0\n",
            at: "targets[0].address",
            line: 4,
            saying: "port from 1 to 65535"
        )
        expectProblem(oneTarget + "listen: 0.0.0.0\n", at: "listen", line: 4, saying: "host:port")
        expectProblem(
            oneTarget + "listen: example.com:80\n",
            at: "listen",
            line: 4,
            saying: "must be an IP address or localhost"
        )
    }

    @Test func keysMustSuitTheKind() {
        expectProblem(
            oneTarget + "    address: h:1\n",
            at: "targets[0].address",
            line: 4,
            saying: "applies to tcp and grpc targets"
        )
        expectProblem(
            "targets:\n  - name: a\n    kind: tcp\n    address: h:1\n    expect: { status: 200 }\n",
            at: "targets[0].expect",
            line: 5,
            saying: "http targets only"
        )
        expectProblem(
            "targets:\n  - name: a\n    kind: tcp\n    address: h:1\n    service: x\n",
            at: "targets[0].service",
            line: 5,
            saying: "grpc targets only"
        )
    }

    @Test func targetNamesAreUniqueAndPlain() {
        expectProblem(
            oneTarget + "  - name: a\n    url: http://i/\n",
            at: "targets",
            line: nil,
            saying: "duplicate target name \"a\""
        )
        expectProblem(
            "server: { base_url: http://h/ }\ntargets:\n  - name: server\n    url: http://i/\n",
            at: "targets",
            line: nil,
            saying: "the server shorthand already defines"
        )
        expectProblem(
            "targets:\n  - name: my api\n    url: http://h/\n",
            at: "targets[0].name",
            line: 2,
            saying: "not a valid name"
        )
    }

    @Test func quorumsMustBeReachable() {
        expectProblem(oneTarget + "policy: { quorum: 2 }\n", at: "policy.quorum", line: 4, saying: "from 1 to 1")
        expectProblem(oneTarget + "policy: { quorum: 0 }\n", at: "policy.quorum", line: 4, saying: "from 1 to 1")
        expectProblem(oneTarget + "policy: { majority: 1 }\n", at: "policy.majority", line: 4, saying: "unknown key")
    }

    @Test func expectationsAreChecked() {
        let expect = "targets:\n  - name: a\n    url: http://h/\n    expect:\n"
        expectProblem(
            expect + "      status: 700\n",
            at: "targets[0].expect.status",
            line: 5,
            saying: "from 100 to 599"
        )
        expectProblem(
            expect + "      status: [200, ok]\n",
            at: "targets[0].expect.status[1]",
            line: 5,
            saying: "is not an HTTP status"
        )
        expectProblem(
            expect + "      status: \"299-200\"\n",
            at: "targets[0].expect.status",
            line: 5,
            saying: "is not an HTTP status"
        )
        expectProblem(
            expect + "      json: { pointer: status, equals: ok }\n",
            at: "targets[0].expect.json.pointer",
            line: 5,
            saying: "starts with \"/\""
        )
        expectProblem(
            expect + "      json: { pointer: /status }\n",
            at: "targets[0].expect.json",
            line: 5,
            saying: "missing equals"
        )
        expectProblem(
            expect + "      json: { pointer: /s, equals: [1] }\n",
            at: "targets[0].expect.json.equals",
            line: 5,
            saying: "found a list"
        )
        expectProblem(
            expect + "      body_contains: ok\n      json: { pointer: /s, equals: ok }\n",
            at: "targets[0].expect",
            line: 5,
            saying: "not both"
        )
    }

    @Test func everyProblemIsReportedInOneRun() {
        let found = problems(
            """
            sever: {}
            targets:
              - name: a
                url: ftp://x/
                timeout: 5
              - kind: udp
            policy: most
            """
        )
        #expect(
            found.map(\.keyPath) == [
                "sever", "targets[0].url", "targets[0].timeout", "targets[1]", "targets[1].kind", "policy",
            ]
        )
        #expect(found.allSatisfy { $0.line != nil })
    }

    @Test func problemsReadLikeCompilerDiagnostics() {
        let problem = ConfigurationProblem(
            source: "/etc/reachd.yaml",
            keyPath: "targets[0].timout",
            line: 4,
            column: 5,
            message: "unknown key; did you mean \"timeout\"?"
        )
        #expect(
            problem.description == "/etc/reachd.yaml:4:5: targets[0].timout: unknown key; did you mean \"timeout\"?"
        )
    }

    @Test func anUnreadableFileSaysWhy() throws {
        let missing = "/nonexistent/reachd.yaml"
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.load(from: .file(missing)) }
        do {
            _ = try DaemonConfiguration.load(from: .file(missing))
        } catch {
            #expect(error.description == "/nonexistent/reachd.yaml: cannot read the file: no such file")
        }
        do {
            _ = try DaemonConfiguration.load(from: .file(NSTemporaryDirectory()))
        } catch {
            #expect(error.problems.first?.message.contains("directory") == true)
        }
    }
}

@Suite("Configuration: files it reads are capped in size")
struct BoundedFileTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory("bounded")
    }

    /// A file of `count` bytes in the test's directory.
    private func file(_ name: String, bytes count: Int) throws -> String {
        let path = "\(directory)/\(name)"
        try Data(repeating: UInt8(ascii: "a"), count: count).write(to: URL(filePath: path))
        return path
    }

    @Test func aConfigurationFileOverOneMebibyteIsRefusedNamingTheFile() throws {
        let path = try file("huge.yaml", bytes: (1 << 20) + 1)
        do {
            _ = try DaemonConfiguration.load(from: .file(path))
            Issue.record("a 1 MiB + 1 byte configuration was read")
        } catch {
            #expect(
                "\(error)"
                    == "\(path): cannot read the file: it is larger than 1 MiB, the most reachd reads from such a file"
            )
        }
    }

    @Test func aTokenFileOver64KiBIsAProblemAtItsKey() throws {
        let path = try file("token", bytes: (64 << 10) + 1)
        expectProblem(
            "server:\n  base_url: http://h\n  bearer_token_file: \(path)\n",
            at: "server.bearer_token_file",
            line: 3,
            saying: "cannot read the token from \(path): it is larger than 64 KiB"
        )
        let fits = try file("fits", bytes: 64 << 10)
        #expect(throws: Never.self) {
            try DaemonConfiguration.parse(
                "server:\n  base_url: http://h\n  bearer_token_file: \(fits)\n",
                source: "t.yaml"
            )
        }
    }

    @Test func aTargetsFileOverOneMebibyteIsRefusedNamingTheFile() throws {
        let path = try file("targets.txt", bytes: (1 << 20) + 1)
        var configuration = try DaemonConfiguration.parse(oneTarget, source: "t.yaml")
        do {
            try configuration.replaceTargets(withURLsIn: path)
            Issue.record("a 1 MiB + 1 byte targets file was read")
        } catch {
            #expect("\(error)".hasPrefix("\(path): cannot read the targets file: it is larger than 1 MiB"), "\(error)")
        }
    }

    @Test func anEndlessFileIsReadOnlyUpToTheCap() throws {
        do {
            _ = try DaemonConfiguration.load(from: .file("/dev/zero"))
            Issue.record("/dev/zero was read as a configuration")
        } catch {
            #expect(error.description.contains("larger than 1 MiB"), "\(error)")
        }
    }
}
