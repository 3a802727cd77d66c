import ReachConfig
import ReachCore
import ReachSupport
import Testing

@Suite("Configuration: upstream")
struct UpstreamConfigurationTests {
    @Test func theSystemsResolverIsTheDefaultReference() throws {
        #expect(try DaemonConfiguration.load(from: .embeddedDefault).upstream == .resolver)
        #expect(try DaemonConfiguration.parse(oneTarget, source: "t.yaml").upstream == .resolver)
    }

    @Test func aReferenceIsTheResolverATCPAddressOrNone() throws {
        let cases: [(String, UpstreamCheck)] = [
            ("resolver", .resolver), ("none", UpstreamCheck.none),
            ("tcp://192.0.2.53:53", .tcp(HostPort(host: "192.0.2.53", port: 53))),
            ("\"tcp://[2001:db8::53]:853\"", .tcp(HostPort(host: "2001:db8::53", port: 853))),
            ("tcp://ref.example:443", .tcp(HostPort(host: "ref.example", port: 443))),
        ]
        for (text, expected) in cases {
            #expect(
                try DaemonConfiguration.parse("upstream: { check: \(text) }\n" + oneTarget, source: "t.yaml").upstream
                    == expected,
                "\(text)"
            )
        }
    }

    @Test func anythingElseIsNamedAtItsKey() {
        for text in ["ping://192.0.2.1", "tcp://192.0.2.1", "tcp://:53", "tcp://h:0", "tcp://h:65536", "yes"] {
            expectProblem(
                "upstream: { check: \"\(text)\" }\n" + oneTarget,
                at: "upstream.check",
                line: 1,
                saying: "resolver, none, or tcp://HOST:PORT"
            )
        }
        expectProblem("upstream: { checks: none }\n" + oneTarget, at: "upstream.checks", line: 1, saying: "unknown key")
    }
}
