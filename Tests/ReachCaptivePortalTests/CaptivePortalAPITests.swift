import Foundation
import ReachCaptivePortal
import ReachCore
import ReachTestRigs
import ReachTesting
import Testing

/// The RFC 8908 API asked for real: an HTTPS server on loopback with a certificate from a CA of
/// the test's own, its URI in networkd-format link state files.
@Suite struct CaptivePortalAPITests {
    @Test func networkdsLinkStateNamesTheAPIPerInterfaceIndex() throws {
        let directory = try TemporaryDirectory("networkd-links")
        try "ADMIN_STATE=configured\nOPER_STATE=routable\nCAPTIVE_PORTAL=https://portal.example/api\nDNS=192.0.2.53\n"
            .write(toFile: directory.path + "/2", atomically: true, encoding: .utf8)
        try "OPER_STATE=routable\n".write(toFile: directory.path + "/3", atomically: true, encoding: .utf8)
        try "CAPTIVE_PORTAL=urn:ietf:params:capport:unrestricted\n".write(
            toFile: directory.path + "/5",
            atomically: true,
            encoding: .utf8
        )
        try "CAPTIVE_PORTAL=http://plain.example/api\n".write(
            toFile: directory.path + "/4",
            atomically: true,
            encoding: .utf8
        )
        try "CAPTIVE_PORTAL=https://not-an-index.example/\n".write(
            toFile: directory.path + "/lo",
            atomically: true,
            encoding: .utf8
        )
        #expect(
            NetworkdLinkState.captivePortalAPIs(in: directory.path) == [
                2: "https://portal.example/api", 5: NetworkdLinkState.unrestricted,
            ]
        )
        #expect(NetworkdLinkState.captivePortalAPIs(in: directory.path + "/missing").isEmpty)
    }

    @Test func theAPIIsAskedForCaptiveJSONOutOfTheInterfaceOverVerifiedTLS() async throws {
        let directory = try TemporaryDirectory("captive-api")
        let ca = try await PrivateCA.make(in: directory.path)
        let server = try await CaptivePortalAPIServer(
            certificate: try await ca.issue(name: "portal.test"),
            answer:
                #"{"captive": true, "user-portal-url": "https://portal.test/login", "venue-info-url": "https://portal.test/venue", "seconds-remaining": 42, "can-extend-session": true}"#
        )
        let client = CaptivePortalAPIClient(caFile: ca.certificate)
        let answer = try await client.answer(at: server.url, interface: "lo", timeout: .seconds(5))
        #expect(
            answer
                == CaptivePortalAPIAnswer(
                    isCaptive: true,
                    userPortalURL: "https://portal.test/login",
                    venueInfoURL: "https://portal.test/venue",
                    secondsRemaining: 42
                )
        )
        // The server's log line reaches the test through a pipe, possibly after the answer.
        try await waitUntil("the API logs the request") { server.requests.count == 1 }
        #expect(server.requests == ["application/captive+json"])

        try await server.answer(
            #"{"captive": false, "bytes-remaining": 1000000, "user-portal-url": "javascript:alert(1)"}"#
        )
        let open = try await client.answer(at: server.url, interface: nil, timeout: .seconds(5))
        #expect(open == CaptivePortalAPIAnswer(isCaptive: false, bytesRemaining: 1_000_000))
        await server.stop()
    }

    @Test func aBrokenAPIIsAFailureInWordsNeverAWrongAnswer() async throws {
        let directory = try TemporaryDirectory("captive-api-broken")
        let ca = try await PrivateCA.make(in: directory.path)
        let server = try await CaptivePortalAPIServer(
            certificate: try await ca.issue(name: "portal.test"),
            answer: "<html>login</html>"
        )
        let trusting = CaptivePortalAPIClient(caFile: ca.certificate)
        await #expect(throws: CaptivePortalAPIClient.Failure.self) {
            try await trusting.answer(at: server.url, interface: nil, timeout: .seconds(5))
        }
        // A certificate from a CA nobody trusts.
        let untrusting = CaptivePortalAPIClient(caFile: nil)
        do {
            _ = try await untrusting.answer(at: server.url, interface: nil, timeout: .seconds(5))
            Issue.record("an untrusted certificate was accepted")
        } catch {
            #expect(error.description.contains("TLS") || error.description.contains("certificate"), "\(error)")
        }
        // An interface that does not exist.
        await #expect(throws: CaptivePortalAPIClient.Failure.self) {
            try await trusting.answer(at: server.url, interface: "nosuch0", timeout: .seconds(5))
        }
        await #expect(throws: CaptivePortalAPIClient.Failure.self) {
            try await trusting.answer(
                at: "http://127.0.0.1:\(server.port)/captive",
                interface: nil,
                timeout: .seconds(5)
            )
        }
        await #expect(throws: CaptivePortalAPIClient.Failure.self, "credentials in the URL would show in logs") {
            try await trusting.answer(
                at: "https://user@127.0.0.1:\(server.port)/captive",
                interface: nil,
                timeout: .seconds(5)
            )
        }
        await server.stop()
    }
}
