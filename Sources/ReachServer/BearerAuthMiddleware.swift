import Hummingbird

/// Requires `Authorization: Bearer <token>` on every path except the liveness check.
///
/// `/healthz` stays open so that systemd, a container runtime or a load balancer can check that
/// reachd is alive without holding the token; it reveals nothing about connectivity. The token is
/// compared in constant time, so response timing does not leak how much of a guess was right.
struct BearerAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]
    let openPaths: Set<String>

    init(token: String, openPaths: Set<String>) {
        self.token = Array(token.utf8)
        self.openPaths = openPaths
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if openPaths.contains(request.uri.path) {
            return try await next(request, context)
        }
        guard let header = request.headers[.authorization] else {
            throw APIError(.unauthorized, "this endpoint requires Authorization: Bearer <token>", headers: [.wwwAuthenticate: "Bearer"])
        }
        guard let presented = Self.credentials(header), Self.constantTimeEquals(presented, token) else {
            throw APIError(.unauthorized, "invalid bearer token", headers: [.wwwAuthenticate: #"Bearer error="invalid_token""#])
        }
        return try await next(request, context)
    }

    /// The bytes after the case-insensitive `Bearer ` scheme, or `nil` for another scheme.
    static func credentials(_ header: String) -> [UInt8]? {
        let bytes = Array(header.utf8)
        let scheme = Array("bearer ".utf8)
        guard bytes.count > scheme.count else { return nil }
        for index in scheme.indices {
            let expected = scheme[index]
            let isUpperCaseOfExpected = expected >= UInt8(ascii: "a") && bytes[index] == expected - 0x20
            guard bytes[index] == expected || isUpperCaseOfExpected else { return nil }
        }
        return Array(bytes[scheme.count...])
    }

    /// Compares every byte of the presented value whatever the first difference, so the time taken
    /// depends on the lengths only.
    static func constantTimeEquals(_ presented: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: presented.count ^ expected.count)
        if presented.count != expected.count { difference |= 1 }
        for index in presented.indices {
            let expectedByte = expected.isEmpty ? 0 : expected[index % expected.count]
            difference |= presented[index] ^ expectedByte
        }
        return difference == 0
    }
}
