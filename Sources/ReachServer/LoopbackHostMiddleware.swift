import Hummingbird
import ReachSupport

/// On a loopback listener without a token, answers only requests addressed to a loopback name.
///
/// A web page cannot read another origin's answers, but with DNS rebinding its own name can come
/// to point at 127.0.0.1; the browser then sends that name as `Host`. Refusing every `Host` that
/// is not `localhost`, a `*.localhost` name or a loopback address keeps such a page from reading
/// which servers this machine checks and when it is offline. A request without `Host` (HTTP/1.0)
/// passes: browsers always send one. `/healthz` stays open, as it does under a token.
struct LoopbackHostMiddleware<Context: RequestContext>: RouterMiddleware {
    let openPaths: Set<String>

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if openPaths.contains(request.uri.path) { return try await next(request, context) }
        guard let host = request.head.authority, !Self.namesLoopback(host) else {
            return try await next(request, context)
        }
        throw APIError(
            .misdirectedRequest,
            "this endpoint answers requests for localhost, 127.0.0.1 or [::1] only; set api.bearer_token_file to serve other names"
        )
    }

    /// Whether a `Host` value (`name`, `name:port`, `[v6]:port`) names this machine's loopback:
    /// besides ``ReachSupport/HostPort/isLoopback(_:)``, the `*.localhost` names that resolve to it
    /// (RFC 6761), and any of them as a fully qualified name, with a trailing dot.
    static func namesLoopback(_ host: String) -> Bool {
        var name = HostPort.split(host.lowercased()[...]).host
        if name.hasSuffix(".") { name = name.dropLast() }
        return name.hasSuffix(".localhost") || HostPort.isLoopback(name)
    }
}
