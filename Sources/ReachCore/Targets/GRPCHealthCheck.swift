import ReachSupport

/// A `grpc.health.v1.Health/Check` call.
package struct GRPCHealthCheck: Sendable, Hashable {
    package var endpoint: HostPort
    /// The service name to ask about; empty means the server as a whole.
    package var service: String
    /// Also hold a `Health/Watch` stream open, so the server's own status changes and a broken
    /// connection are noticed in milliseconds rather than at the next tick.
    package var watch: Bool
    /// How the server's certificate is verified when the server speaks TLS; `nil` for plaintext.
    package var tls: TLSSettings?

    package init(endpoint: HostPort, service: String = "", watch: Bool = false, tls: TLSSettings? = nil) {
        self.endpoint = endpoint
        self.service = service
        self.watch = watch
        self.tls = tls
    }
}
