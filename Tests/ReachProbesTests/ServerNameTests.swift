@testable import ReachProbes
import Testing

@Suite("TLS server name in the probe URL")
struct ServerNameTests {
    @Test(arguments: [
        ("https://127.0.0.1:8443/health", "127.0.0.1", "https://api.internal:8443/health"),
        ("https://[::1]:8443/health", "::1", "https://api.internal:8443/health"),
        ("https://[2001:db8::5]/health", "2001:db8::5", "https://api.internal/health"),
        ("https://10.0.0.1/10.0.0.1", "10.0.0.1", "https://api.internal/10.0.0.1"),
    ])
    func theServerNameReplacesTheHostAndItsBrackets(url: String, host: String, expected: String) {
        #expect(url.replacingHost(host, with: "api.internal") == expected)
    }
}
