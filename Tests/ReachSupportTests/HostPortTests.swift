import ReachSupport
import Testing

@Suite("Host and port: loopback, splitting, who needs a token")
struct HostPortTests {
    @Test(arguments: [
        ("localhost", true), ("LocalHost", true), ("127.0.0.1", true), ("127.9.9.9", true), ("::1", true),
        ("0.0.0.0", false), ("::", false), ("192.168.1.10", false), ("example.com", false), ("foo.localhost", false),
    ])
    func loopback(host: String, isLoopback: Bool) {
        #expect(HostPort.isLoopback(host) == isLoopback)
        #expect(HostPort(host: host, port: 80).isLoopback == isLoopback)
        #expect(
            HostPort(host: host, port: 80).listenerNeedsToken == !isLoopback,
            "a listener others can reach needs a token"
        )
    }

    @Test(arguments: [
        ("127.0.0.1:80", "127.0.0.1", "80"), ("[::1]:9780", "::1", "9780"), ("[::1]", "::1", nil),
        ("localhost", "localhost", nil),
        ("::1", "::1", nil), ("host:", "host", ""), (":80", "", "80"), ("[::1]x", "::1", nil),
    ])
    func splits(text: String, host: String, port: String?) {
        let split = HostPort.split(text[...])
        #expect(split.host == host[...])
        #expect(split.port.map(String.init) == port)
    }
}
