import ReachConfig
import ReachCore
import ReachSupport
import Testing

@Suite("Configuration: quality")
struct QualityConfigurationTests {
    @Test func withoutTheSectionNoTargetHasABudget() throws {
        let configuration = try DaemonConfiguration.parse(oneTarget, source: "t.yaml")
        #expect(configuration.targets.map(\.quality) == [nil])
    }

    @Test func theShippedFileCarriesTheShippedBudgets() throws {
        let configuration = try DaemonConfiguration.load(from: .embeddedDefault)
        #expect(configuration.targets.map(\.quality) == [QualityBudget.shipped])
    }

    @Test func theSectionIsEveryTargetsAndATargetOverridesAnyKeyOrTurnsItOff() throws {
        let yaml = """
            quality: { latency: 300ms, loss: 5%, jitter: 50ms, window: 30s }
            server: { base_url: "http://127.0.0.1:8080", quality: { latency: 1s } }
            targets:
              - { name: a, url: "http://h/" }
              - { name: b, url: "http://h/", quality: { loss: 0.5%, window: 1m } }
              - { name: c, url: "http://h/", quality: off }
            """
        let targets = try DaemonConfiguration.parse(yaml, source: "t.yaml").targets
        let section = QualityBudget(
            latency: .milliseconds(300),
            loss: 0.05,
            jitter: .milliseconds(50),
            window: .seconds(30)
        )
        #expect(targets.map(\.name) == ["server", "a", "b", "c"])
        #expect(
            targets[0].quality
                == QualityBudget(latency: .seconds(1), loss: 0.05, jitter: .milliseconds(50), window: .seconds(30))
        )
        #expect(targets[1].quality == section)
        #expect(
            targets[2].quality
                == QualityBudget(
                    latency: .milliseconds(300),
                    loss: 0.005,
                    jitter: .milliseconds(50),
                    window: .seconds(60)
                )
        )
        #expect(targets[3].quality == nil)
    }

    @Test func aTargetMayHaveABudgetWithoutTheSection() throws {
        let yaml = "targets:\n  - { name: a, url: \"http://h/\", quality: { latency: 250ms } }\n"
        let target = try #require(try DaemonConfiguration.parse(yaml, source: "t.yaml").targets.first)
        #expect(target.quality == QualityBudget(latency: .milliseconds(250)))
    }

    @Test func badValuesAreNamedAtTheirKeyAndLine() {
        let cases: [(String, String, String)] = [
            ("latency: 300", "quality.latency", "add a unit: 300s or 300ms"),
            ("latency: 2m", "quality.latency", "out of range"),
            ("loss: 5", "quality.loss", "add a %: 5%"),
            ("loss: 0%", "quality.loss", "out of range"),
            ("loss: 100%", "quality.loss", "out of range"),
            ("loss: lots", "quality.loss", "a share of probes like 5%"),
            ("window: 0s", "quality.window", "out of range"),
            ("latancy: 1s", "quality.latancy", "did you mean \"latency\"?"),
        ]
        for (entry, keyPath, fragment) in cases {
            expectProblem("\(oneTarget)quality:\n  \(entry)\n", at: keyPath, line: 5, saying: fragment)
        }
        expectProblem("\(oneTarget)quality: on\n", at: "quality", line: 4, saying: "one of off")
    }

    @Test func aWindowThatHoldsFewerThanThreeProbesIsRefused() {
        expectProblem(
            "quality: { latency: 1s, window: 5s }\ntargets:\n  - { name: a, url: \"http://h/\", interval: 2s }\n",
            at: "targets[0]",
            line: 3,
            saying: "quality window 5s holds fewer than 3 probes of target \"a\" (interval 2s): make it at least 6s"
        )
    }
}
