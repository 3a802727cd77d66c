import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ReachServer
import ReachTesting
import Testing

/// `GET /` and its token cookie, through the router: what the browser tests rely on, and what the
/// cookie must never open.
@Suite("The status page's route and cookie")
struct StatusPageRouteTests {
    @Test func theTokenOnceBecomesACookieThatOpensOnlyThePageAndItsDocuments() async throws {
        let harness = MonitorHarness()
        let app = harness.server(token: "s3cret token;%", checkWaitLimit: .milliseconds(50)).makeApplication()
        try await app.test(.router) { client in
            var cookie = ""
            try await client.execute(uri: "/?token=s3cret%20token%3B%25", method: .get) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/")
                let setCookie = try #require(response.headers[.setCookie])
                #expect(setCookie.hasPrefix("reachd_token=s3cret%20token%3B%25;"))
                #expect(
                    setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict")
                        && setCookie.contains("Path=/")
                )
                cookie = String(setCookie.prefix { $0 != ";" })
            }
            try await client.execute(uri: "/?token=wrong", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.setCookie] == nil)
            }
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .unauthorized)
            }
            for path in ["/", "/v1/status"] {
                try await client.execute(uri: path, method: .get, headers: [.cookie: "other=1; \(cookie)"]) {
                    response in
                    #expect(response.status == .ok, "\(path)")
                }
            }
            try await client.execute(uri: "/v1/status", method: .get, headers: [.cookie: "reachd_token=s3cret"]) {
                response in
                #expect(response.status == .unauthorized)
            }
            for (path, method) in [("/v1/check", HTTPRequest.Method.post), ("/metrics", .get)] {
                try await client.execute(uri: path, method: method, headers: [.cookie: cookie]) { response in
                    #expect(response.status == .unauthorized, "the cookie opens no \(method) \(path)")
                }
            }
            for path in ["/assets/status-page.css", "/assets/status-page.js"] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .ok, "\(path) is open")
                }
            }
        }
        await harness.stop()
    }

    @Test func thePageIsHTMLUnderAStrictContentSecurityPolicy() async throws {
        let harness = MonitorHarness()
        try await harness.server().makeApplication().test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                let policy = try #require(response.headers[.contentSecurityPolicy])
                #expect(
                    policy.contains("default-src 'none'") && policy.contains("script-src 'self'")
                        && !policy.contains("unsafe-inline")
                )
                #expect(response.headers[.cacheControl] == "no-store")
                let html = String(buffer: response.body)
                #expect(html.contains(#"id="verdict""#) && html.contains("aria-live"))
            }
            try await client.execute(uri: "/", method: .post) { response in
                #expect(response.status == .methodNotAllowed)
            }
        }
        await harness.stop()
    }
}
