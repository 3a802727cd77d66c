import NIOCore
import NIOHTTP1
import ReachCore
import ReachSupport
import Testing

@testable import ReachProbes

/// What a probe sends, worked out once per check: the request target, the Host header (the TLS
/// server name when one is set) and the name checked against the certificate.
@Suite("HTTP request plan")
struct HTTPRequestPlanTests {
    /// No TLS context: what is sent does not depend on it, and making one reads the whole trust store.
    func plan(
        _ url: String,
        host: String,
        port: Int,
        serverName: String? = nil,
        headers: [HTTPHeaderField] = []
    ) throws -> HTTPRequestPlan {
        let check = HTTPCheck(
            url: url,
            endpoint: HostPort(host: host, port: port),
            headers: headers,
            tls: TLSSettings(serverName: serverName)
        )
        return try HTTPRequestPlan(check: check, tls: nil)
    }

    @Test(arguments: [
        ("https://127.0.0.1:8443/health", "127.0.0.1", 8443, "api.internal:8443"),
        ("https://[::1]:8443/health", "::1", 8443, "api.internal:8443"),
        ("https://[2001:db8::5]/health", "2001:db8::5", 443, "api.internal"),
    ])
    func theServerNameIsTheHostAndTheCertificateName(url: String, host: String, port: Int, expected: String) throws {
        let plan = try plan(url, host: host, port: port, serverName: "api.internal")
        #expect(plan.head.headers["Host"] == [expected])
        #expect(plan.serverHostname == "api.internal")
        #expect(plan.endpoint == HostPort(host: host, port: port), "the connection still goes to the URL's address")
    }

    @Test func anAddressIsCheckedAsAnAddressAndKeepsItsBrackets() throws {
        let v6 = try plan("https://[::1]:8443/health", host: "::1", port: 8443)
        #expect(v6.head.headers["Host"] == ["[::1]:8443"])
        #expect(v6.serverHostname == nil, "SNI carries no address; the certificate is checked against it")
        let plain = try plan("http://example.com/health", host: "example.com", port: 80)
        #expect(plain.head.headers["Host"] == ["example.com"], "the default port is left out")
        #expect(plain.tls == nil)
        #expect(plain.head.headers["Connection"] == ["close"], "one request per connection")
    }

    @Test func theRequestIsEncodedOnceAsNIOHTTP1SendsIt() throws {
        let plan = try plan(
            "http://127.0.0.1:8080/health?x=1",
            host: "127.0.0.1",
            port: 8080,
            headers: [HTTPHeaderField(name: "X-Probe", value: "a b")]
        )
        let text = String(buffer: plan.encodedRequest)
        #expect(text.hasPrefix("GET /health?x=1 HTTP/1.1\r\n"))
        #expect(text.contains("\r\nHost: 127.0.0.1:8080\r\n"))
        #expect(text.contains("\r\nX-Probe: a b\r\n"))
        #expect(text.contains("\r\nConnection: close\r\n"))
        #expect(text.hasSuffix("\r\n\r\n"), "no body and no chunked framing for a GET")
        #expect(!text.lowercased().contains("transfer-encoding"))
    }

    /// A check built in code (ReachKit's embedded service) skips the config parser's checks.
    @Test func aHeaderNIOHTTP1WouldNotSendFailsThePlan() {
        #expect(throws: (any Error).self) {
            try plan(
                "http://127.0.0.1/",
                host: "127.0.0.1",
                port: 80,
                headers: [HTTPHeaderField(name: "X-Bad", value: "a\r\nInjected: 1")]
            )
        }
    }
}
