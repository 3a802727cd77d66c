import ReachConfig
import ReachCore
import ReachSupport
import Testing

@Suite("Configuration: dns and icmp targets")
struct DNSAndICMPConfigurationTests {
    static func target(_ lines: String) throws -> ProbeTarget {
        let configuration = try DaemonConfiguration.parse("targets:\n  - name: t\n" + lines, source: "t.yaml").engine
        return try #require(configuration.targets.first)
    }

    @Test func aDNSTargetWithEveryKey() throws {
        let target = try Self.target(
            """
                kind: dns
                query: api.example.org.
                type: aaaa
                server: "[2001:db8::53]:5353"
                transport: tcp
                expect: { rcode: NOERROR, answer_contains: "2001:db8::10" }

            """
        )
        #expect(target.kind == "dns")
        #expect(
            target.check
                == .dns(
                    DNSCheck(
                        query: "api.example.org",
                        recordType: .aaaa,
                        server: HostPort(host: "2001:db8::53", port: 5353),
                        transport: .tcp,
                        expectation: DNSExpectation(answerContains: "2001:db8::10")
                    )
                )
        )
    }

    @Test func aDNSTargetsDefaultsAreAnARecordOverUDPFromTheHostsResolvers() throws {
        let target = try Self.target("    kind: dns\n    query: api.example.org\n")
        #expect(target.check == .dns(DNSCheck(query: "api.example.org")))
        let checkThatItDoesNotExist = try Self.target(
            "    kind: dns\n    query: gone.example.org\n    server: 10.0.0.53\n    expect: { rcode: nxdomain }\n"
        )
        #expect(
            checkThatItDoesNotExist.check
                == .dns(
                    DNSCheck(
                        query: "gone.example.org",
                        server: HostPort(host: "10.0.0.53", port: 53),
                        expectation: DNSExpectation(responseCode: .nonExistentDomain)
                    )
                )
        )
        #expect(
            try Self.target("    kind: dns\n    query: 192.0.2.1\n    type: PTR\n").endpoint.host == "",
            "asks the host's"
        )
    }

    @Test func anICMPTargetSendsFiveEchoesUnlessToldOtherwise() throws {
        #expect(try Self.target("    kind: icmp\n    host: 10.0.0.1\n").check == .icmp(ICMPCheck(host: "10.0.0.1")))
        let named = try Self.target(
            "    kind: icmp\n    host: gw.example.org\n    packets: 20\n    address_family: ipv6\n"
        )
        #expect(named.check == .icmp(ICMPCheck(host: "gw.example.org", packets: 20)))
        #expect(named.addressFamily == .ipv6)
    }

    @Test func eachMistakeIsNamedAtItsKeyAndLine() {
        let cases: [(String, String, Int, String)] = [
            ("    kind: dns\n", "targets[0]", 2, "missing query"),
            ("    kind: dns\n    query: a..b\n", "targets[0].query", 4, "empty label"),
            ("    kind: dns\n    query: bücher.example\n", "targets[0].query", 4, "xn--"),
            ("    kind: dns\n    query: a.b\n    type: AXFR\n", "targets[0].type", 5, "one of A, AAAA, CNAME"),
            (
                "    kind: dns\n    query: a.b\n    server: ns.example.org\n", "targets[0].server", 5,
                "a resolver's address"
            ),
            ("    kind: dns\n    query: a.b\n    server: 10.0.0.53:0\n", "targets[0].server", 5, "a port from 1"),
            ("    kind: dns\n    query: a.b\n    transport: quic\n", "targets[0].transport", 5, "one of udp, tcp"),
            ("    kind: dns\n    query: a.b\n    expect: { rcode: OOPS }\n", "targets[0].expect.rcode", 5, "NXDOMAIN"),
            (
                "    kind: dns\n    query: a.b\n    expect: { status: 200 }\n", "targets[0].expect.status", 5,
                "unknown key"
            ),
            (
                "    kind: dns\n    query: a.b\n    expect: { rcode: NXDOMAIN, answer_contains: x }\n",
                "targets[0].expect.answer_contains", 5, "needs rcode NOERROR"
            ),
            ("    kind: dns\n    query: a.b\n    host: 10.0.0.1\n", "targets[0].host", 5, "icmp targets only"),
            ("    kind: dns\n    query: a.b\n    url: http://h/\n", "targets[0].url", 5, "does not apply to dns"),
            ("    kind: icmp\n", "targets[0]", 2, "missing host"),
            ("    kind: icmp\n    host: 10.0.0.1:80\n", "targets[0].host", 4, "ICMP has no port"),
            ("    kind: icmp\n    host: 10.0.0.1\n    packets: 0\n", "targets[0].packets", 5, "from 1 to 100"),
            ("    kind: icmp\n    host: 10.0.0.1\n    query: a.b\n", "targets[0].query", 5, "dns targets only"),
            (
                "    kind: icmp\n    host: 10.0.0.1\n    expect: { status: 200 }\n", "targets[0].expect", 5,
                "does not apply to icmp"
            ),
            ("    kind: tcp\n    address: h:1\n    packets: 3\n", "targets[0].packets", 5, "icmp targets only"),
            ("    url: http://h/\n    query: a.b\n", "targets[0].query", 4, "dns targets only"),
            ("    kind: smtp\n", "targets[0].kind", 3, "one of http, tcp, grpc, dns, icmp"),
        ]
        for (lines, path, line, saying) in cases {
            expectProblem("targets:\n  - name: t\n" + lines, at: path, line: line, saying: saying)
        }
    }
}
