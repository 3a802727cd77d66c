import ReachKit
import Testing

/// A program's banner says what the desktop says: ``ServiceVerdict/message`` reads the one wording
/// table that the notification agent reads (its sentences are pinned in ReachNotificationsTests).
@Suite("Words for people")
struct ConnectivityMessageTests {
    let since = WallTime(sinceEpoch: .seconds(1_800_000_000))

    @Test func aDisconnectedVerdictSaysWhoseFaultAndWhyAsTheDesktopDoes() {
        let verdict = ServiceVerdict(
            state: .disconnected,
            reason: .monitor(.targetFailed(target: "server", reason: .timeout)),
            since: since,
            fault: .upstream
        )
        #expect(
            verdict.message
                == ConnectivityMessage(
                    title: "Waiting for connectivity…",
                    body: "The internet connection is down. The server did not answer in time (target server).",
                    iconName: "network-error"
                )
        )
        let offline = ServiceVerdict(state: .disconnected, reason: .monitor(.noLink), since: since, fault: .link)
        #expect(offline.message?.body == "No network connection is active (no cable or Wi-Fi link).")
        #expect(offline.message?.iconName == "network-offline")
    }

    @Test func aCaptivePortalAsksToSignInWhereTheNetworkSays() {
        let portal = CaptivePortal(
            evidence: .rfc8908,
            userPortalURL: "https://login.hotel.example/",
            venueInfoURL: "https://hotel.example/welcome"
        )
        let verdict = ServiceVerdict(
            state: .disconnected,
            reason: .monitor(.captivePortal),
            since: since,
            fault: .portal,
            portal: portal
        )
        #expect(
            verdict.message
                == ConnectivityMessage(
                    title: "Sign in to the network",
                    body: "Sign in at hotel.example to reach the server.",
                    iconName: "dialog-password",
                    signInURL: "https://login.hotel.example/"
                )
        )
    }

    @Test func connectedSaysSoAndUnknownSaysNothing() {
        #expect(
            ServiceVerdict(state: .connected, reason: .monitor(.healthy), since: since).message?.title == "Connected"
        )
        #expect(
            ConnectivityMessage.restored(after: .seconds(125)).body
                == "The server can be reached again after 2 min 5 s."
        )
        #expect(
            ServiceVerdict(state: .unknown, reason: .reachdUnreachable("connection refused"), since: since).message
                == nil
        )
    }
}
