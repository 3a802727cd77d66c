import Foundation
import ReachConfig
import ReachCore
import Testing

@Suite("Configuration: captive_portal and tls")
struct CaptivePortalConfigurationTests {
    @Test func nothingIsContactedUnlessConfigured() throws {
        let configuration = try DaemonConfiguration.load(from: .embeddedDefault)
        #expect(configuration.captivePortal.check == nil)
        #expect(configuration.captivePortal.apiURL == nil)
        #expect(configuration.captivePortal.networkdStateDirectory == "/run/systemd/netif/links")
        #expect(configuration.captivePortal.sessionWarning == .seconds(300))
        #expect(configuration.certificateWarning == .seconds(14 * 86_400))
        #expect(configuration.probedTargets == configuration.targets)
    }

    @Test func theCheckURLIsProbedWithTheTargetsDefaults() throws {
        let configuration = try DaemonConfiguration.parse(
            """
            probe: { interval: 2s, timeout: 500ms }
            captive_portal:
              check_url: http://check.example/generate_204
              expect_status: 204
              api_url: https://portal.example/captive
              networkd_state_dir: /tmp/links
              warn_before: 10m
            tls: { warn_before: 30d }
            \(oneTarget)
            """,
            source: "t.yaml"
        )
        let check = try #require(configuration.captivePortal.check)
        #expect(check.url == "http://check.example/generate_204")
        #expect(check.target.name == PortalCheck.probeName)
        #expect(check.target.interval == .seconds(2))
        #expect(check.target.timeout == .milliseconds(500))
        if case .http(let http) = check.target.check { #expect(http.expectation.statuses == [204...204]) }
        #expect(configuration.probedTargets.map(\.name) == ["a", PortalCheck.probeName])
        #expect(configuration.monitor.portalCheck == check)
        #expect(configuration.captivePortal.apiURL == "https://portal.example/captive")
        #expect(configuration.captivePortal.networkdStateDirectory == "/tmp/links")
        #expect(configuration.captivePortal.sessionWarning == .seconds(600))
        #expect(configuration.certificateWarning == .seconds(30 * 86_400))
    }

    @Test func aCheckURLNeedsAnExpectedAnswerAndPlainHTTP() {
        expectProblem(
            "captive_portal: { check_url: \"http://c.example/\" }\n" + oneTarget,
            at: "captive_portal.check_url",
            line: 1,
            saying: "set expect_status"
        )
        expectProblem(
            "captive_portal: { check_url: \"https://c.example/\", expect_status: 204 }\n" + oneTarget,
            at: "captive_portal.check_url",
            line: 1,
            saying: "use an http:// check URL"
        )
        expectProblem(
            "captive_portal: { expect_status: 204 }\n" + oneTarget,
            at: "captive_portal.expect_status",
            line: 1,
            saying: "check_url, which is not set"
        )
        expectProblem(
            "captive_portal: { check_url: \"http://c.example/\", expect_status: 99 }\n" + oneTarget,
            at: "captive_portal.expect_status",
            line: 1,
            saying: "from 100 to 599"
        )
    }

    @Test func theAPIIsHTTPSAndTheDirectoryAbsolute() {
        expectProblem(
            "captive_portal: { api_url: \"http://p.example/\" }\n" + oneTarget,
            at: "captive_portal.api_url",
            line: 1,
            saying: "over HTTPS"
        )
        expectProblem(
            "captive_portal: { networkd_state_dir: links }\n" + oneTarget,
            at: "captive_portal.networkd_state_dir",
            line: 1,
            saying: "absolute"
        )
        expectProblem(
            "captive_portal: { check: yes }\n" + oneTarget,
            at: "captive_portal.check",
            line: 1,
            saying: "unknown key"
        )
        expectProblem(
            "tls: { warn_before: soon }\n" + oneTarget,
            at: "tls.warn_before",
            line: 1,
            saying: "not a duration"
        )
    }
}
