import HTTPTypes
import Hummingbird
import ReachSupport

/// The cookie in which a browser keeps the bearer token for the status page.
///
/// A person opens `/?token=…` once; reachd answers with this cookie and a redirect to `/`, so the
/// token leaves the address bar and the history. The cookie is `HttpOnly` (no script reads it),
/// `SameSite=Strict` (no other site's page makes the browser send it) and accepted only for `GET`
/// of the page and the documents it reads (``ReachAPI/StatusAPI/pageCookiePaths``), never for a
/// route that acts: a forged request cannot make reachd probe.
struct PageCookie: Sendable {
    static let name = "reachd_token"
    /// How long a browser keeps it: 30 days; a changed token makes it void at once.
    static let maxAgeSeconds = 30 * 86_400

    /// The cookie's value: the token with every byte a cookie value may not hold percent-encoded.
    let value: Secret

    init(token: Secret) {
        value = Secret(token.revealed.percentEncoded { $0 > 0x20 && $0 < 0x7F && !"\";,\\%".utf8.contains($0) })
    }

    /// The `Set-Cookie` value.
    var setCookie: String {
        "\(Self.name)=\(value.revealed); Path=/; Max-Age=\(Self.maxAgeSeconds); HttpOnly; SameSite=Strict"
    }

    /// Whether the request carries this cookie (any of its `Cookie` fields).
    func isPresented(in request: Request) -> Bool {
        var found = false
        for field in request.headers[values: .cookie] {
            for pair in field.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == Self.name else { continue }
                // No early exit: the time taken does not depend on which cookie matched.
                found = value.matches(trimmed[trimmed.index(after: equals)...].utf8) || found
            }
        }
        return found
    }
}
