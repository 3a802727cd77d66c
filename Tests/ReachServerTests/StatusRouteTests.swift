import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ReachCore
import ReachServer
import ReachTesting
import Testing

/// Decodes a response body as a JSON object.
func jsonObject(_ body: ByteBuffer) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])
}

@Suite("Status API: routes")
struct StatusRouteTests {
    @Test func statusAnswersTheCurrentVerdictAsJSON() async throws {
        let harness = MonitorHarness()
        harness.connect()
        try await harness.server().makeApplication().test(.router) { client in
            try await client.execute(uri: "/v1/status", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                let object = try jsonObject(response.body)
                #expect(object["state"] as? String == "connected")
                #expect(object["reason"] as? String == "healthy")
                #expect(object["likely_connected"] as? Bool == true)
                #expect(object["usable_interfaces"] as? [String] == ["eth0"])
                #expect(object["sequence"] as? Int == Int(harness.sequence))
                let target = try #require((object["targets"] as? [[String: Any]])?.first)
                #expect(target["health"] as? String == "healthy")
            }
            harness.record(.refused("server"))
            try await client.execute(uri: "/v1/status", method: .get) { response in
                let object = try jsonObject(response.body)
                #expect(object["state"] as? String == "disconnected")
                #expect(object["reason"] as? String == "connection_refused")
                #expect((object["reason_detail"] as? String)?.contains("target server") == true)
                #expect(object["likely_connected"] as? Bool == false)
                let target = try #require((object["targets"] as? [[String: Any]])?.first)
                #expect(target["reason"] as? String == "connection_refused")
                #expect(target["phase"] as? String == "connect")
            }
        }
        await harness.stop()
    }

    @Test func healthzIsAboutReachdNotConnectivity() async throws {
        let harness = MonitorHarness()
        harness.monitor.update(links: .offline)
        #expect(harness.monitor.current.verdict.state == .disconnected)
        try await harness.server().makeApplication().test(.router) { client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                #expect(String(buffer: response.body) == #"{"status":"ok"}"#)
            }
        }
        await harness.stop()
    }

    @Test func unknownPathsAre404JSON() async throws {
        let harness = MonitorHarness()
        try await harness.server().makeApplication().test(.router) { client in
            for path in ["/v1", "/v1/nope", "/v2/status", "/assets/nope.js"] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .notFound, "\(path)")
                    #expect(response.headers[.contentType] == "application/json")
                    let message = try jsonObject(response.body)["error"] as? String
                    #expect(message?.isEmpty == false)
                }
            }
        }
        await harness.stop()
    }

    @Test func wrongMethodsAre405WithAllow() async throws {
        let harness = MonitorHarness()
        try await harness.server().makeApplication().test(.router) { client in
            let cases: [(String, HTTPRequest.Method, String)] = [
                ("/v1/status", .post, "GET"), ("/v1/events", .delete, "GET"), ("/v1/check", .get, "POST"),
                ("/healthz", .put, "GET"),
                ("/metrics", .post, "GET"),
            ]
            for (path, method, allow) in cases {
                try await client.execute(uri: path, method: method) { response in
                    #expect(response.status == .methodNotAllowed, "\(method) \(path)")
                    #expect(response.headers[.allow] == allow)
                    let message = try jsonObject(response.body)["error"] as? String
                    #expect(message?.contains(method.rawValue) == true)
                }
            }
        }
        await harness.stop()
    }

    @Test func aNonNumericLastEventIDIs400() async throws {
        let harness = MonitorHarness()
        try await harness.server().makeApplication().test(.router) { client in
            let lastEventID = HTTPField.Name("Last-Event-ID")!
            for value in ["abc", "-1", "1.5", "18446744073709551616"] {
                try await client.execute(uri: "/v1/events", method: .get, headers: [lastEventID: value]) { response in
                    #expect(response.status == .badRequest, "\(value)")
                    #expect(response.headers[.contentType] == "application/json")
                    let message = try jsonObject(response.body)["error"] as? String
                    #expect(message?.contains("Last-Event-ID") == true)
                }
            }
            try await client.execute(uri: "/v1/events?last_event_id=x", method: .get) { response in
                #expect(response.status == .badRequest)
            }
        }
        #expect(harness.monitor.subscriberCount == 0, "a rejected request subscribes to nothing")
        await harness.stop()
    }

    @Test func aTokenGuardsEveryRouteButHealthz() async throws {
        let harness = MonitorHarness()
        let app = harness.server(token: "s3cret-token", checkWaitLimit: .milliseconds(50)).makeApplication()
        try await app.test(.router) { client in
            for (path, method) in [
                ("/v1/status", HTTPRequest.Method.get), ("/v1/check", .post), ("/metrics", .get), ("/v1/events", .get),
                ("/nope", .get),
            ] {
                try await client.execute(uri: path, method: method) { response in
                    #expect(response.status == .unauthorized, "no token: \(path)")
                    #expect(response.headers[.wwwAuthenticate] == "Bearer")
                    let message = try jsonObject(response.body)["error"] as? String
                    #expect(message?.isEmpty == false)
                }
                for wrong in [
                    "Bearer s3cret-tokeN", "Bearer s3cret-token-and-more", "Bearer s3cret", "Basic czNjcmV0LXRva2Vu",
                    "s3cret-token", "Bearer ",
                ] {
                    try await client.execute(uri: path, method: method, headers: [.authorization: wrong]) { response in
                        #expect(response.status == .unauthorized, "\(wrong): \(path)")
                        #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                    }
                }
            }
            for header in ["Bearer s3cret-token", "bearer s3cret-token", "BEARER s3cret-token"] {
                try await client.execute(uri: "/v1/status", method: .get, headers: [.authorization: header]) {
                    response in
                    #expect(response.status == .ok, "\(header)")
                }
            }
            try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer s3cret-token"]) {
                response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok, "liveness needs no token")
            }
        }
        await harness.stop()
    }

    /// What a page using DNS rebinding sends is refused; what local clients send is answered.
    @Test(arguments: [nil, "s3cret-token"])
    func withoutATokenOnlyLoopbackHostsAreAnswered(token: String?) async throws {
        let harness = MonitorHarness()
        harness.connect()
        try await harness.server(token: token).makeApplication().test(.live) { client in
            let port = try #require(client.port)
            func statusCode(_ path: String, host: String) async throws -> String {
                let socket = try RawSocket(port: port)
                let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
                await socket.send("GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\(authorization)Connection: close\r\n\r\n")
                let text = await socket.readUntilClosed(timeout: .seconds(5)).text
                return String(text.split(separator: " ").dropFirst().first ?? "")
            }
            for host in [
                "localhost", "localhost:\(port)", "LOCALHOST.", "app.localhost:\(port)", "127.0.0.1:\(port)",
                "127.1.2.3", "[::1]:\(port)",
            ] {
                #expect(try await statusCode("/v1/status", host: host) == "200", "\(host)")
            }
            for host in [
                "evil.example", "evil.example:\(port)", "192.168.1.5:\(port)", "localhost.evil.example",
                "[::2]:\(port)",
            ] {
                let expected = token == nil ? "421" : "200"
                #expect(try await statusCode("/v1/status", host: host) == expected, "\(host), token \(token ?? "none")")
                #expect(try await statusCode("/healthz", host: host) == "200", "liveness answers any host")
            }
        }
        await harness.stop()
    }

    @Test func theTokenIsNeverInAnAnswer() async throws {
        let harness = MonitorHarness()
        harness.connect()
        try await harness.server(token: "s3cret-token", checkWaitLimit: .milliseconds(50)).makeApplication().test(
            .router
        ) { client in
            for (path, method) in [
                ("/v1/status", HTTPRequest.Method.get), ("/v1/check", .post), ("/metrics", .get), ("/healthz", .get),
            ] {
                try await client.execute(uri: path, method: method, headers: [.authorization: "Bearer s3cret-token"]) {
                    response in
                    #expect(!String(buffer: response.body).contains("s3cret"))
                    #expect(!response.headers.contains { $0.value.contains("s3cret") })
                }
            }
        }
        await harness.stop()
    }

    @Test func addressesKnowWhetherTheyNeedAToken() {
        #expect(!StatusServer.Address.tcp(host: "127.0.0.1", port: 9780).needsToken)
        #expect(!StatusServer.Address.tcp(host: "::1", port: 9780).needsToken)
        #expect(!StatusServer.Address.tcp(host: "localhost", port: 9780).needsToken)
        #expect(!StatusServer.Address.unixSocket("/run/reachd/status.sock").needsToken)
        #expect(StatusServer.Address.tcp(host: "0.0.0.0", port: 9780).needsToken)
        #expect(StatusServer.Address.tcp(host: "192.168.1.10", port: 9780).needsToken)
        #expect(StatusServer.Address.tcp(host: "::1", port: 9780).description == "[::1]:9780")
    }

    @Test func theCheckWaitCoversTheLongestProbeTimeout() {
        #expect(ImmediateCheck.waitLimit(for: []) == .seconds(3))
        #expect(ImmediateCheck.waitLimit(for: [.http("a")]) == .seconds(3))
        var slow = ProbeTarget.http("b")
        slow.timeout = .seconds(5)
        #expect(ImmediateCheck.waitLimit(for: [.http("a"), slow]) == .seconds(6))
        slow.timeout = .seconds(300)
        #expect(ImmediateCheck.waitLimit(for: [slow]) == .seconds(30), "an answer clients still wait for")
    }
}
