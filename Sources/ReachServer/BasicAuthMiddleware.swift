import FoundationEssentials
import HTTPTypes
import Hummingbird
import HummingbirdBcrypt
import NIOPosix
import ReachSupport

/// HTTP basic auth against the web configuration's `basic_auth_users` (bcrypt hashes), beside
/// the bearer token: a request with `Authorization: Basic` is checked against the users, any
/// other goes to the bearer check when a token is set. Without users it only hands over.
///
/// The answer to a missing or wrong password is `401` with `WWW-Authenticate: Basic`, as
/// exporter-toolkit answers, so that a browser asks for them. The liveness path stays open, as
/// under the token. bcrypt runs on NIO's thread pool (it is slow on purpose), and an unknown user
/// costs one verification too, so that timing does not tell which names exist.
struct BasicAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let security: ListenerSecurity
    let bearer: BearerAuthMiddleware<Context>?
    let openPaths: Set<String>

    static var challenge: String { #"Basic realm="reachd", charset="UTF-8""# }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let users = security.users
        guard !users.isEmpty, !openPaths.contains(request.uri.path) else {
            if let bearer { return try await bearer.handle(request, context: context, next: next) }
            return try await next(request, context)
        }
        if let header = request.headers[.authorization], let credentials = Self.credentials(header) {
            guard await Self.verify(credentials.password, hash: users[credentials.user]) else {
                throw APIError(
                    .unauthorized,
                    "wrong user name or password",
                    headers: [.wwwAuthenticate: Self.challenge]
                )
            }
            return try await next(request, context)
        }
        guard let bearer else {
            throw APIError(
                .unauthorized,
                "this endpoint requires a user name and password (basic auth)",
                headers: [.wwwAuthenticate: Self.challenge]
            )
        }
        do {
            return try await bearer.handle(request, context: context, next: next)
        } catch var error as APIError where error.status == .unauthorized {
            error.headers.append(HTTPField(name: .wwwAuthenticate, value: Self.challenge))
            throw error
        }
    }

    /// The user and password of an `Authorization: Basic` value (the scheme in any case).
    static func credentials(_ authorization: String) -> (user: String, password: String)? {
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Data(base64Encoded: String(parts[1]).trimmingWhitespace).flatMap({
                String(data: $0, encoding: .utf8)
            }),
            let colon = decoded.firstIndex(of: ":")
        else { return nil }
        return (String(decoded[..<colon]), String(decoded[decoded.index(after: colon)...]))
    }

    /// Whether `password` is the one `hash` was made from; an unknown user (`nil`) costs the same and fails.
    static func verify(_ password: String, hash: Secret?) async -> Bool {
        // `$2y$` (htpasswd, PHP) is the same algorithm as `$2b$`, which the C implementation names.
        let written = hash?.revealed ?? timingHash
        let comparable = written.hasPrefix("$2y$") ? "$2b$" + written.dropFirst(4) : written
        let matches =
            (try? await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: comparable) }) ?? false
        return matches && hash != nil
    }

    /// A hash no password is checked against for real: what an unknown user's password is checked against.
    private static var timingHash: String { "$2y$10$T.XUyznjyAVb5Sssdj6TTec5sun0SWYXyhQLky2WsF0EtkpS85Z2m" }
}
