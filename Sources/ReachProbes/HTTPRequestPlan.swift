import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOSSL
import ReachCore
import ReachSupport

/// Everything a check's probes send, worked out once: where to connect, the request head, and the
/// TLS context. Parsing the URL and loading a CA bundle each second would cost more than the probe.
struct HTTPRequestPlan: Sendable {
    /// Where to connect: the URL's host (a name or an address) and port.
    var endpoint: HostPort
    /// The endpoint's host when it is an address literal, parsed once (see ``ProbeSocket``).
    var address: SocketAddress?
    var head: HTTPRequestHead
    /// `head` as NIOHTTP1's encoder writes it, its headers checked by NIOHTTP1's validator: encoded
    /// once here, so that a probe sends bytes instead of encoding and validating headers again.
    var encodedRequest: ByteBuffer
    /// `nil` for plain HTTP.
    var tls: NIOSSLContext?
    /// The name sent in SNI and checked against the certificate; `nil` for an address, whose
    /// certificate is checked against the address itself.
    var serverHostname: String?
    /// Whether judging the answer needs its body; other bodies are read and dropped.
    var keepsBody: Bool

    /// - Parameter tls: The TLS context for the check's CA bundle (see ``TLSContexts``);
    ///   ignored for plain HTTP.
    /// - Throws: When NIOHTTP1 refuses to send the request (a header it finds malformed).
    init(check: HTTPCheck, tls: NIOSSLContext?) throws {
        endpoint = check.endpoint
        address = try? SocketAddress(ipAddress: endpoint.host, port: endpoint.port)
        keepsBody = check.expectation.needsBody
        // A check made in code (ReachKit's embedded service) may skip the parser: `/` then.
        let target = HTTPURL(check.url)?.requestTarget ?? "/"
        var headers = HTTPHeaders()
        let hostName = check.tls.serverName ?? check.endpoint.host
        headers.add(
            name: "Host",
            value: HTTPURL.hostHeader(host: hostName, port: check.endpoint.port, isHTTPS: check.isHTTPS)
        )
        headers.add(name: "User-Agent", value: "reachd/\(ReachVersion.current)")
        for field in check.headers {
            headers.add(name: field.name, value: field.value)
        }
        if let token = check.bearerToken {
            headers.replaceOrAdd(name: "Authorization", value: "Bearer \(token.revealed)")
        }
        // One request per connection: every probe proves the whole path (DNS, connect, TLS), and
        // the server, closing first, keeps the TIME_WAIT.
        headers.replaceOrAdd(name: "Connection", value: "close")
        head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)
        encodedRequest = try Self.encode(head)
        if check.isHTTPS {
            self.tls = tls
            let name = check.tls.serverName ?? check.endpoint.host
            serverHostname = IPAddress(name) == nil ? name : nil
        }
    }

    /// The bytes NIOHTTP1's client pipeline sends for `head` and an empty end.
    static func encode(_ head: HTTPRequestHead) throws -> ByteBuffer {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        try channel.pipeline.syncOperations.addHTTPClientHandlers()
        try channel.writeOutbound(HTTPClientRequestPart.head(head))
        try channel.writeOutbound(HTTPClientRequestPart.end(nil))
        var bytes = ByteBuffer()
        while var part = try channel.readOutbound(as: ByteBuffer.self) {
            bytes.writeBuffer(&part)
        }
        return bytes
    }
}
