import ReachConfig
import ReachCore
import ReachEngine
import ReachSupport
import Testing

@Suite("What applying a configuration changes")
struct ConfigurationChangeTests {
    let oneTarget = "server:\n  base_url: http://127.0.0.1:8080\n"

    @Test func targetsAreComparedByNameAndDefinitionAndTheLimitFollowsThem() throws {
        let old = try DaemonConfiguration.load(from: .embeddedDefault).engine
        var new = old
        new.targets[0].interval = .seconds(5)
        new.targets.append(
            ProbeTarget(name: "extra", check: .tcp(HostPort(host: "127.0.0.1", port: 22)), timeout: .seconds(10))
        )
        new.policy = .any
        let change = ConfigurationChange(from: old, to: new)
        #expect(change.addedTargets == ["extra"])
        #expect(change.changedTargets == ["server"])
        #expect(change.removedTargets == [])
        #expect(change.needsRestart == [])
        #expect(change.targetsChanged && change.appliesLive)
        #expect(change.summary == "targets +1 -0 ~1 (added: extra; changed: server)")
        #expect(change.checkWaitLimit == .seconds(11), "the longest timeout and a second")

        let none = ConfigurationChange(from: old, to: old)
        #expect(!none.targetsChanged && !none.appliesLive && none.needsRestart.isEmpty)
        #expect(none.summary == "targets +0 -0 ~0")
        #expect(none.checkWaitLimit == .seconds(3))
        #expect(ConfigurationChange(from: new, to: old).removedTargets == ["extra"])
    }

    @Test func aChangedCheckURLIsAppliedLiveAndTheRestOfThePortalNeedsARestart() throws {
        let old = try DaemonConfiguration.parse(oneTarget, source: "t.yaml").engine
        let new = try DaemonConfiguration.parse(
            "captive_portal: { check_url: \"http://c.example/\", expect_body: Success }\n" + oneTarget,
            source: "t.yaml"
        ).engine
        #expect(ConfigurationChange(from: old, to: new).targetsChanged)
        let api = try DaemonConfiguration.parse(
            "captive_portal: { api_url: \"https://p.example/\" }\n" + oneTarget,
            source: "t.yaml"
        ).engine
        #expect(ConfigurationChange(from: old, to: api).needsRestart == ["captive_portal"])
    }

    @Test func aChangedUpstreamReferenceOrCertificateWarningNeedsARestart() throws {
        let old = try DaemonConfiguration.parse(oneTarget, source: "t.yaml").engine
        let new = try DaemonConfiguration.parse("upstream: { check: none }\n" + oneTarget, source: "t.yaml").engine
        #expect(ConfigurationChange(from: old, to: new).needsRestart == ["upstream.check"])
        let warning = try DaemonConfiguration.parse("tls: { warn_before: 1d }\n" + oneTarget, source: "t.yaml").engine
        #expect(ConfigurationChange(from: old, to: warning).needsRestart == ["tls.warn_before"])
    }
}
