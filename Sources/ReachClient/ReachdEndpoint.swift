import FoundationEssentials
import ReachPOSIX
import ReachSupport

/// Where reachd's status API is, and the bearer token it wants.
public struct ReachdEndpoint: Sendable, Hashable {
    /// reachd's default listen address.
    public static let defaultURL = "http://127.0.0.1:9780"

    /// An `http://` URL, or the path of reachd's unix socket (`/run/reachd/reachd.sock`).
    ///
    /// Not `https://`: reachd serves plain HTTP, on loopback or a unix socket (a token guards any
    /// other address), so its client speaks no TLS; ``resolve(configured:tokenFile:environment:)``
    /// refuses such a URL.
    public let base: String
    /// The bearer token; `nil` when reachd asks for none (its default on loopback and the socket).
    public let token: String?

    /// An endpoint as given; a trailing `/` is dropped.
    public init(base: String, token: String? = nil) {
        var base = base
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.token = token
    }

    /// The endpoint a program should use: the one it configured (reachd's unix socket path, or a
    /// URL), else `$REACHD_ENDPOINT` (as reachctl reads it), else ``defaultURL``; with the token
    /// read from `tokenFile` when given.
    ///
    /// - Throws: ``ReachdEndpointError`` when the endpoint is neither a unix socket path nor an
    ///   `http://host:port` URL, or when the token file cannot be read or does not hold one line.
    public static func resolve(
        configured: String? = nil, tokenFile: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ReachdEndpointError) -> ReachdEndpoint {
        let base = configured ?? environment["REACHD_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultURL
        _ = try ReachdEndpoint(base: base).address()
        guard let tokenFile else { return ReachdEndpoint(base: base) }
        switch BoundedFile.readSecret(tokenFile) {
        case .success(let token): return ReachdEndpoint(base: base, token: token)
        case .failure(let failure): throw ReachdEndpointError(base: base, problem: "cannot use the token file \(tokenFile): \(failure)")
        }
    }

    /// Whether ``base`` names a unix socket.
    public var isUnixSocket: Bool { base.hasPrefix("/") }

    /// Where to connect.
    enum Address {
        case tcp(host: String, port: Int)
        case unixSocket(String)

        /// The `Host` header: reachd answers a loopback name only, unless it asks for a token.
        var hostHeader: String {
            switch self {
            case .tcp(let host, let port): HostPort(host: host, port: port).description
            case .unixSocket: "localhost"
            }
        }
    }

    /// The socket to connect to: ``base`` read as a unix socket path or an `http://` URL (port 80
    /// when it names none).
    func address() throws(ReachdEndpointError) -> Address {
        if isUnixSocket { return .unixSocket(base) }
        guard let url = URLComponents(string: base), let scheme = url.scheme?.lowercased() else {
            throw ReachdEndpointError(base: base, problem: "is neither a unix socket path nor an http:// URL")
        }
        guard scheme == "http" else {
            throw ReachdEndpointError(
                base: base, problem: scheme == "https" ? "uses https, but reachd serves plain HTTP (loopback or a unix socket)" : "is not an http:// URL")
        }
        guard let host = url.host, !host.isEmpty, url.path.isEmpty || url.path == "/" else {
            throw ReachdEndpointError(base: base, problem: "must be http://HOST:PORT, without a path")
        }
        return .tcp(host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port: url.port ?? 80)
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
