import ReachSupport

/// A GET against an HTTP(S) health endpoint.
package struct HTTPCheck: Sendable, Hashable {
    /// The full URL, e.g. `https://api.example.com/api/v1/health`.
    package var url: String
    /// The URL's host and port (default port filled in), for the link rule and logs.
    package var endpoint: HostPort
    package var expectation: HTTPExpectation
    package var headers: [HTTPHeaderField]
    /// Sent as `Authorization: Bearer ...`; read from a file or a systemd credential at load time.
    package var bearerToken: Secret?
    package var tls: TLSSettings

    package init(
        url: String,
        endpoint: HostPort,
        expectation: HTTPExpectation = HTTPExpectation(),
        headers: [HTTPHeaderField] = [],
        bearerToken: Secret? = nil,
        tls: TLSSettings = TLSSettings()
    ) {
        self.url = url
        self.endpoint = endpoint
        self.expectation = expectation
        self.headers = headers
        self.bearerToken = bearerToken
        self.tls = tls
    }

    package var isHTTPS: Bool { url.lowercased().hasPrefix("https:") }
}

/// A request header a health endpoint needs, e.g. `X-Api-Key`.
package struct HTTPHeaderField: Sendable, Hashable {
    package var name: String
    package var value: String

    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// How a probe verifies the server's certificate.
package struct TLSSettings: Sendable, Hashable {
    /// A PEM bundle of extra trusted CAs (a private CA, a self-signed server); `nil` trusts the system store.
    package var caFile: String?
    /// The name sent in SNI and checked against the certificate, when it differs from the URL's host.
    package var serverName: String?

    package init(caFile: String? = nil, serverName: String? = nil) {
        self.caFile = caFile
        self.serverName = serverName
    }
}
