import Foundation
import Logging
import ReachCore
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

@testable import ReachEngine

/// The RFC 8908 API learned the RFC 8910 way and asked for real: networkd-format link state in a
/// test directory, an HTTPS API on loopback (a CA of the test's own), the monitor on a test clock
/// so that hours of a session pass at once.
@Suite struct CaptivePortalServiceTests {
    @Test func theNetworksAPIMakesTheVerdictAndItsSessionEndIsWarnedAboutOnce() async throws {
        let directory = try TemporaryDirectory("captive-service")
        let ca = try await PrivateCA.make(in: directory.path)
        let api = try await CaptivePortalAPIServer(
            certificate: try await ca.issue(name: "portal.test"),
            answer:
                #"{"captive": true, "user-portal-url": "https://portal.test/login", "venue-info-url": "https://portal.test/hotel"}"#
        )
        // The loopback interface is index 1: its state file names the API, as networkd's would.
        let links = directory.path + "/links"
        try FileManager.default.createDirectory(atPath: links, withIntermediateDirectories: true)
        try "OPER_STATE=carrier\nCAPTIVE_PORTAL=\(api.url)\n".write(
            toFile: links + "/1",
            atomically: true,
            encoding: .utf8
        )

        let logs = CapturedLogs()
        let server = ProbeTarget(
            name: "server",
            check: .http(HTTPCheck(url: "http://127.0.0.1:9/health", endpoint: HostPort(host: "127.0.0.1", port: 9)))
        )
        let harness = MonitorHarness(targets: [server], logger: logs.logger)
        harness.record(.ok("server"))
        #expect(harness.state == .connected)
        let service = CaptivePortalService(
            settings: CaptivePortalSettings(
                networkdStateDirectory: links,
                caFile: ca.certificate,
                sessionWarning: .seconds(300)
            ),
            monitor: harness.monitor,
            clock: harness.clock.monitorClock,
            interval: .seconds(1),
            timeout: .seconds(5),
            logger: logs.logger
        )
        let running = Task { await service.run() }

        try await waitUntil("the API says captive") { harness.reason == .captivePortal }
        let portal = harness.monitor.current.verdict.portal
        #expect(portal?.evidence == .rfc8908)
        #expect(portal?.userPortalURL == "https://portal.test/login")
        #expect(portal?.venueInfoURL == "https://portal.test/hotel")
        #expect(portal?.interface == "lo")
        #expect(api.requests.allSatisfy { $0 == "application/captive+json" })
        // Logged by the service once the monitor has the answer: after the verdict the test just saw.
        try await waitUntil("the portal logged") {
            logs.all.contains {
                $0.metadata["event"] == "captive_portal" && $0.metadata["portal_url"] == "https://portal.test/login"
            }
        }

        // Signed in: an hour of session. Captive, it was asked every interval; the next ask sees it.
        try await api.answer(
            #"{"captive": false, "user-portal-url": "https://portal.test/login", "seconds-remaining": 3600}"#
        )
        try await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(1))
        try await waitUntil("signed in") { harness.state == .connected }
        #expect(harness.monitor.current.verdict.portal?.isCaptive == false)
        #expect(!logs.all.contains { $0.metadata["event"] == "portal_session_ending" })

        // 55 minutes on (the next ask is 5 minutes after the last): 290 s left, within the
        // 5-minute lead: a warning. 145 s later the API counts down to 145 s: the same session,
        // no second warning.
        try await api.answer(
            #"{"captive": false, "user-portal-url": "https://portal.test/login", "seconds-remaining": 290}"#
        )
        try await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(300))
        try await waitUntil("the session warning") {
            logs.all.contains { $0.metadata["event"] == "portal_session_ending" }
        }
        try await api.answer(
            #"{"captive": false, "user-portal-url": "https://portal.test/login", "seconds-remaining": 145}"#
        )
        try await harness.clock.waitForSleepers()
        let asked = api.requests.count
        let sleepers = harness.clock.sleeperCount
        harness.clock.advance(by: .seconds(145))
        try await waitUntil("the next ask") { api.requests.count > asked }
        // Its answer handled: the service sleeps until its next ask again.
        try await harness.clock.waitForSleepers(sleepers)
        let warnings = logs.all.filter { $0.metadata["event"] == "portal_session_ending" }
        #expect(warnings.count == 1)
        #expect(warnings.first?.level == .warning)
        #expect(warnings.first?.metadata["seconds_remaining"] == "290")

        // The network's API goes away: the verdict no longer names a portal.
        try FileManager.default.removeItem(atPath: links + "/1")
        try await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(300))
        try await waitUntil("no portal") { harness.monitor.current.verdict.portal == nil }
        running.cancel()
        await running.value
        await api.stop()
        await harness.stop()
    }
}
