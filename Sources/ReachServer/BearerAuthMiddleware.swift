import HTTPTypes
import Hummingbird
import ReachAPI
import ReachSupport

/// Requires `Authorization: Bearer <token>` on every path except the liveness check and the page's
/// assets; a browser may instead present the page's cookie (``PageCookie``) for `GET` of the page
/// and the documents it reads.
///
/// `/healthz` stays open so that systemd, a container runtime or a load balancer can check that
/// reachd is alive without holding the token; it reveals nothing about connectivity. The token is
/// compared in constant time (``Secret/isBearerCredential(_:)``).
struct BearerAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: Secret
    let openPaths: Set<String>
    let cookie: PageCookie

    init(token: Secret, openPaths: Set<String>) {
        self.token = token
        self.openPaths = openPaths
        self.cookie = PageCookie(token: token)
    }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        if openPaths.contains(path) {
            return try await next(request, context)
        }
        if let header = request.headers[.authorization] {
            guard token.isBearerCredential(header) else {
                throw APIError(
                    .unauthorized,
                    "invalid bearer token",
                    headers: [.wwwAuthenticate: #"Bearer error="invalid_token""#]
                )
            }
            return try await next(request, context)
        }
        let isPageRead = request.method == .get && StatusAPI.pageCookiePaths.contains(path)
        if isPageRead, cookie.isPresented(in: request) {
            return try await next(request, context)
        }
        if request.method == .get, path == StatusAPI.page.path,
            let presented = request.uri.queryParameters.get(StatusAPI.pageTokenQuery)
        {
            guard token.matches(presented.utf8) else {
                throw APIError(
                    .unauthorized,
                    "invalid token",
                    headers: [.wwwAuthenticate: #"Bearer error="invalid_token""#]
                )
            }
            // The token leaves the address bar: the browser keeps it in the cookie and loads `/`.
            return Response(
                status: .seeOther,
                headers: [.location: StatusAPI.page.path, .setCookie: cookie.setCookie, .cacheControl: "no-store"]
            )
        }
        let hint =
            path == StatusAPI.page.path
            ? "open /?token=<token> once (the browser keeps it in a cookie), or send " : "this endpoint requires "
        throw APIError(.unauthorized, hint + "Authorization: Bearer <token>", headers: [.wwwAuthenticate: "Bearer"])
    }
}
