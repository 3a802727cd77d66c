import FoundationEssentials
import ReachPOSIX
import ReachSupport

/// Where reachd's status API is, and how to prove who is asking: the bearer token, or a user and
/// password (basic auth, from reachd's web configuration file); for an `https://` endpoint, which
/// CAs its certificate must come from.
public struct ReachdEndpoint: Sendable, Hashable {
    /// reachd's default listen address.
    public static let defaultURL = "http://127.0.0.1:9780"

    /// An `http://` or `https://` URL, or the path of reachd's unix socket (`/run/reachd/reachd.sock`).
    ///
    /// `https://` is for a reachd whose web configuration file (`--web.config.file`) gives its
    /// listener a certificate; the client speaks TLS on the system's OpenSSL.
    public let base: String
    /// The bearer token; `nil` when reachd asks for none (its default on loopback and the socket).
    public let token: String?
    /// PEM CA certificates an `https://` endpoint's certificate must come from; the system's
    /// store when `nil`.
    public let caFile: String?
    /// A user and password for reachd's `basic_auth_users`; sent instead of a token.
    public let basicAuth: BasicAuth?

    /// A user name and password for HTTP basic auth.
    public struct BasicAuth: Sendable, Hashable {
        public let user: String
        public let password: String

        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }
    }

    /// An endpoint as given; a trailing `/` is dropped.
    public init(base: String, token: String? = nil, caFile: String? = nil, basicAuth: BasicAuth? = nil) {
        var base = base
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.token = token
        self.caFile = caFile
        self.basicAuth = basicAuth
    }

    /// The endpoint a program should use: the one it configured (reachd's unix socket path, or a
    /// URL), else `$REACHD_ENDPOINT` (as reachctl reads it), else ``defaultURL``; with the token
    /// read from `tokenFile`, or `user` and the password read from `passwordFile`, when given.
    ///
    /// - Parameter caFile: PEM CA certificates to trust for an `https://` endpoint instead of the system's.
    /// - Throws: ``ReachdEndpointError`` when the endpoint is neither a unix socket path nor an
    ///   `http(s)://host:port` URL, when a file cannot be read or does not hold one line, or when
    ///   both a token and a user are given.
    public static func resolve(
        configured: String? = nil,
        tokenFile: String? = nil,
        caFile: String? = nil,
        user: String? = nil,
        passwordFile: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ReachdEndpointError) -> ReachdEndpoint {
        let base = configured ?? environment["REACHD_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultURL
        _ = try ReachdEndpoint(base: base).address()
        func secret(_ path: String, _ what: String) throws(ReachdEndpointError) -> String {
            switch BoundedFile.readSecret(path) {
            case .success(let secret): return secret
            case .failure(let failure):
                throw ReachdEndpointError(base: base, problem: "cannot use the \(what) \(path): \(failure)")
            }
        }
        guard tokenFile == nil || user == nil else {
            throw ReachdEndpointError(base: base, problem: "takes a token or a user and password, not both")
        }
        guard (user == nil) == (passwordFile == nil) else {
            throw ReachdEndpointError(base: base, problem: "needs both a user and a password file for basic auth")
        }
        if let caFile, case .failure(let failure) = BoundedFile.readText(caFile, limit: BoundedFile.textLimit) {
            throw ReachdEndpointError(base: base, problem: "cannot use the CA file \(caFile): \(failure)")
        }
        let token = try tokenFile.map { path throws(ReachdEndpointError) in try secret(path, "token file") }
        let password = try passwordFile.map { path throws(ReachdEndpointError) in try secret(path, "password file") }
        let basicAuth = user.flatMap { user in password.map { BasicAuth(user: user, password: $0) } }
        return ReachdEndpoint(base: base, token: token, caFile: caFile, basicAuth: basicAuth)
    }

    /// Whether ``base`` names a unix socket.
    public var isUnixSocket: Bool { base.hasPrefix("/") }

    /// The `Authorization` value sent with every request, if any.
    var authorization: String? {
        if let token { return "Bearer \(token)" }
        guard let basicAuth else { return nil }
        return "Basic " + Data("\(basicAuth.user):\(basicAuth.password)".utf8).base64EncodedString()
    }

    /// Where to connect.
    enum Address {
        case tcp(host: String, port: Int, tls: Bool)
        case unixSocket(String)

        /// The `Host` header: reachd answers a loopback name only, unless it asks for a token.
        var hostHeader: String {
            switch self {
            case .tcp(let host, let port, _): HostPort(host: host, port: port).description
            case .unixSocket: "localhost"
            }
        }
    }

    /// The socket to connect to: ``base`` read as a unix socket path or an `http(s)://` URL (port
    /// 80 or 443 when it names none).
    func address() throws(ReachdEndpointError) -> Address {
        if isUnixSocket { return .unixSocket(base) }
        guard let url = URLComponents(string: base), let scheme = url.scheme?.lowercased() else {
            throw ReachdEndpointError(
                base: base,
                problem: "is neither a unix socket path nor an http:// or https:// URL"
            )
        }
        guard scheme == "http" || scheme == "https" else {
            throw ReachdEndpointError(base: base, problem: "is not an http:// or https:// URL")
        }
        guard let host = url.host, !host.isEmpty, url.path.isEmpty || url.path == "/" else {
            throw ReachdEndpointError(base: base, problem: "must be \(scheme)://HOST:PORT, without a path")
        }
        let tls = scheme == "https"
        return .tcp(
            host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host,
            port: url.port ?? (tls ? 443 : 80),
            tls: tls
        )
    }
}

/// The endpoint named for reachd cannot be used: not one this client can connect to, or its token
/// file cannot be read.
public struct ReachdEndpointError: Error, Sendable, CustomStringConvertible {
    /// The endpoint as given.
    public let base: String
    /// What is wrong, completing "the reachd endpoint BASE …".
    public let problem: String

    public var description: String { "the reachd endpoint \(base) \(problem)" }
}
