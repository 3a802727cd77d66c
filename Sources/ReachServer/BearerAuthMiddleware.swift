import Hummingbird
import ReachCore

/// Requires `Authorization: Bearer <token>` on every path except the liveness check.
///
/// `/healthz` stays open so that systemd, a container runtime or a load balancer can check that
/// reachd is alive without holding the token; it reveals nothing about connectivity. The token is
/// compared in constant time (``Secret/isBearerCredential(_:)``).
struct BearerAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: Secret
    let openPaths: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if openPaths.contains(request.uri.path) {
            return try await next(request, context)
        }
        guard let header = request.headers[.authorization] else {
            throw APIError(.unauthorized, "this endpoint requires Authorization: Bearer <token>", headers: [.wwwAuthenticate: "Bearer"])
        }
        guard token.isBearerCredential(header) else {
            throw APIError(.unauthorized, "invalid bearer token", headers: [.wwwAuthenticate: #"Bearer error="invalid_token""#])
        }
        return try await next(request, context)
    }
}
