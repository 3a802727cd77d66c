import Foundation
import ReachCore

/// Where reachd's status API is, and the bearer token it wants.
public struct ReachdEndpoint: Sendable, Hashable {
    /// reachd's default listen address.
    public static let defaultURL = "http://127.0.0.1:9780"

    /// An `http(s)://` URL, or the path of reachd's unix socket (`/run/reachd/reachd.sock`).
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
    /// - Throws: ``ReachdTokenFileError`` when the token file cannot be read or does not hold one line.
    public static func resolve(
        configured: String? = nil, tokenFile: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ReachdTokenFileError) -> ReachdEndpoint {
        let base = configured ?? environment["REACHD_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultURL
        guard let tokenFile else { return ReachdEndpoint(base: base) }
        guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
            throw ReachdTokenFileError(path: tokenFile, problem: "cannot be read")
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, !token.hasHeaderControlCharacter else {
            throw ReachdTokenFileError(path: tokenFile, problem: "must hold one line with the token")
        }
        return ReachdEndpoint(base: base, token: token)
    }

    /// Whether ``base`` names a unix socket.
    public var isUnixSocket: Bool { base.hasPrefix("/") }

    /// The URL of `path` on this endpoint (`http+unix://` for a socket).
    func url(_ path: String) -> String {
        guard isUnixSocket else { return base + path }
        let socket = base.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? base
        return "http+unix://\(socket)\(path)"
    }
}

/// The token file named for reachd cannot be used.
public struct ReachdTokenFileError: Error, CustomStringConvertible {
    /// The token file named.
    public let path: String
    /// What is wrong with it.
    public let problem: String

    public var description: String { "the token file \(path) \(problem)" }
}
