import ReachSupport

/// What a TLS probe saw of the certificate chain the server presented: when the first of its
/// certificates expires, and who the leaf is and who issued it.
///
/// blackbox_exporter's `probe_ssl_earliest_cert_expiry`, per target: an intermediate that expires
/// before the leaf breaks the server just the same, so the earliest `notAfter` of the chain is the
/// date that matters.
public struct ServerCertificate: Sendable, Hashable {
    /// The earliest `notAfter` among the presented certificates.
    public var notAfter: WallTime
    /// The leaf's subject, as `CN=api.example.com, O=Example`.
    public var subject: String
    /// The leaf's issuer, in the same form.
    public var issuer: String

    public init(notAfter: WallTime, subject: String, issuer: String) {
        self.notAfter = notAfter
        self.subject = subject
        self.issuer = issuer
    }
}
