import ReachSupport

/// A GET against an HTTP(S) health endpoint.
public struct HTTPCheck: Sendable, Hashable {
    /// The full URL, e.g. `https://api.example.com/api/v1/health`.
    public var url: String
    /// The URL's host and port (default port filled in), for the link rule and logs.
    public var endpoint: HostPort
    public var expectation: HTTPExpectation
    public var headers: [HTTPHeaderField]
    /// Sent as `Authorization: Bearer ...`; read from a file or a systemd credential at load time.
    public var bearerToken: Secret?
    public var tls: TLSSettings

    public init(
        url: String, endpoint: HostPort, expectation: HTTPExpectation = HTTPExpectation(),
        headers: [HTTPHeaderField] = [], bearerToken: Secret? = nil, tls: TLSSettings = TLSSettings()
    ) {
        self.url = url
        self.endpoint = endpoint
        self.expectation = expectation
        self.headers = headers
        self.bearerToken = bearerToken
        self.tls = tls
    }

    public var isHTTPS: Bool { url.lowercased().hasPrefix("https:") }
}

/// A request header a health endpoint needs, e.g. `X-Api-Key`.
public struct HTTPHeaderField: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// How a probe verifies the server's certificate.
public struct TLSSettings: Sendable, Hashable {
    /// A PEM bundle of extra trusted CAs (a private CA, a self-signed server); `nil` trusts the system store.
    public var caFile: String?
    /// The name sent in SNI and checked against the certificate, when it differs from the URL's host.
    public var serverName: String?

    public init(caFile: String? = nil, serverName: String? = nil) {
        self.caFile = caFile
        self.serverName = serverName
    }
}
