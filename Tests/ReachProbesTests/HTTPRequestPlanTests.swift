import NIOHTTP1
import ReachCore
import Testing

@testable import ReachProbes

/// What a probe sends, worked out once per check: the request target, the Host header (the TLS
/// server name when one is set) and the name checked against the certificate.
@Suite("HTTP request plan")
struct HTTPRequestPlanTests {
    /// No TLS context: what is sent does not depend on it, and making one reads the whole trust store.
    func plan(_ url: String, host: String, port: Int, serverName: String? = nil) -> HTTPRequestPlan {
        let check = HTTPCheck(url: url, endpoint: HostPort(host: host, port: port), tls: TLSSettings(serverName: serverName))
        return HTTPRequestPlan(check: check, tls: nil)
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080/api/v1/health", "/api/v1/health"),
        ("http://example.com", "/"),
        ("http://example.com?ready=1", "/?ready=1"),
        ("http://example.com/a/b?x=1&y=2", "/a/b?x=1&y=2"),
        ("http://example.com/health#top", "/health"),
    ])
    func theRequestTargetIsThePathAndQuery(url: String, target: String) {
        #expect(HTTPRequestPlan.requestTarget(of: url) == target)
    }

    @Test(arguments: [
        ("https://127.0.0.1:8443/health", "127.0.0.1", 8443, "api.internal:8443"),
        ("https://[::1]:8443/health", "::1", 8443, "api.internal:8443"),
        ("https://[2001:db8::5]/health", "2001:db8::5", 443, "api.internal"),
    ])
    func theServerNameIsTheHostAndTheCertificateName(url: String, host: String, port: Int, expected: String) {
        let plan = plan(url, host: host, port: port, serverName: "api.internal")
        #expect(plan.head.headers["Host"] == [expected])
        #expect(plan.serverHostname == "api.internal")
        #expect(plan.endpoint == HostPort(host: host, port: port), "the connection still goes to the URL's address")
    }

    @Test func anAddressIsCheckedAsAnAddressAndKeepsItsBrackets() {
        let v6 = plan("https://[::1]:8443/health", host: "::1", port: 8443)
        #expect(v6.head.headers["Host"] == ["[::1]:8443"])
        #expect(v6.serverHostname == nil, "SNI carries no address; the certificate is checked against it")
        let plain = plan("http://example.com/health", host: "example.com", port: 80)
        #expect(plain.head.headers["Host"] == ["example.com"], "the default port is left out")
        #expect(plain.tls == nil)
        #expect(plain.head.headers["Connection"] == ["close"], "one request per connection")
    }
}
