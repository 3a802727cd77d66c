import Foundation
import ReachCore
import ReachSupport
import Testing

@testable import ReachAPI

/// The captive portal and the certificate in the one contract: written once, read back as they were.
@Suite struct PortalDocumentTests {
    static let since = WallTime(sinceEpoch: .seconds(1_800_000_000))

    @Test func aPortalIsTheNetworksReasonWithWhereToSignIn() throws {
        let portal = CaptivePortal(evidence: .checkURL, userPortalURL: "http://portal.example/login")
        let verdict = Verdict(
            state: .disconnected,
            reason: .captivePortal,
            since: Self.since,
            targets: [TargetStatus(name: "server", kind: "http", health: .healthy)],
            portal: portal
        )
        let document = StatusDocument(event: ConnectivityEvent(sequence: 7, verdict: verdict), likelyConnected: false)
        #expect(document.reason == "captive_portal")
        #expect(document.target == nil)
        #expect(
            document.reasonDetail
                == "a captive portal holds the connection until someone signs in: sign in at http://portal.example/login"
        )
        #expect(
            document.portal
                == StatusDocument.Portal(
                    captive: true,
                    userPortalURL: "http://portal.example/login",
                    evidence: "check_url"
                )
        )
        let json = String(decoding: APIJSON.encode(document), as: UTF8.self)
        #expect(
            json.contains(#""portal":{"bytes_remaining":null,"captive":true,"evidence":"check_url","interface":null,"#)
        )
        let read = try APIJSON.decode(StatusDocument.self, from: Array(json.utf8))
        #expect(read.verdict.reason == .captivePortal)
        #expect(read.verdict.portal == portal)
    }

    @Test func aSessionAndACertificateReadBackAsTheyWereWritten() throws {
        let portal = CaptivePortal(
            evidence: .rfc8908,
            isCaptive: false,
            userPortalURL: "https://portal.example/",
            venueInfoURL: "https://hotel.example/",
            secondsRemaining: 3600,
            bytesRemaining: 10_000,
            sessionEndsAt: WallTime(sinceEpoch: .seconds(1_800_003_600)),
            interface: "wlan0"
        )
        let certificate = ServerCertificate(
            notAfter: WallTime(sinceEpoch: .seconds(1_800_259_200)),
            subject: "CN=api.example.com",
            issuer: "CN=Example CA"
        )
        let verdict = Verdict(
            state: .connected,
            reason: .healthy,
            since: Self.since,
            targets: [TargetStatus(name: "api", kind: "http", health: .healthy, certificate: certificate)],
            portal: portal
        )
        let document = StatusDocument(event: ConnectivityEvent(sequence: 8, verdict: verdict), likelyConnected: true)
        #expect(document.portal?.sessionEndsAt == "2027-01-15T09:00:00.000Z")
        #expect(
            document.targets.first?.certificate
                == StatusDocument.Certificate(
                    notAfter: "2027-01-18T08:00:00.000Z",
                    subject: "CN=api.example.com",
                    issuer: "CN=Example CA"
                )
        )
        let read = try APIJSON.decode(StatusDocument.self, from: APIJSON.encode(document))
        #expect(read.verdict.portal == portal)
        #expect(read.verdict.targets.first?.certificate == certificate)
    }
}
