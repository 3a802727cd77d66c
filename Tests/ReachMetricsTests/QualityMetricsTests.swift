import ReachCore
import ReachMetrics
import ReachSupport
import ReachTesting
import Testing

/// The quality's series: `reachd_quality{state}` as a state set, and per target with a budget its
/// window's latency and loss, its budgets and whether it is impaired.
@Suite("ReachMetrics: quality")
struct QualityMetricsTests {
    static func target(_ name: String, host: String, budget: QualityBudget?) -> ProbeTarget {
        var target = ProbeTarget.http(name, host: host)
        target.quality = budget
        return target
    }

    @Test func theStateSetAndEachJudgedTargetsSeriesFollowTheVerdict() async {
        let budget = QualityBudget(latency: .milliseconds(300), loss: 0.05, window: .seconds(3))
        let harness = MonitorHarness(targets: [
            Self.target("server", host: "203.0.113.10", budget: budget),
            Self.target("plain", host: "203.0.113.11", budget: nil),
        ])
        let metrics = ReachMetrics(targets: harness.targets)
        let scrape = { String(decoding: metrics.exposition(monitor: harness.monitor), as: UTF8.self) }
        var text = scrape()
        #expect(sample(text, #"reachd_quality{state="none"}"#) == 1)
        #expect(sample(text, #"reachd_quality{state="good"}"#) == 0)
        #expect(sample(text, #"reachd_quality{state="impaired"}"#) == 0)
        #expect(sample(text, #"reachd_target_impaired{target="server"}"#) == 0)
        #expect(sample(text, #"reachd_target_quality_budget{target="server",measure="latency"}"#) == 0.3)
        #expect(sample(text, #"reachd_target_quality_budget{target="server",measure="loss"}"#) == 0.05)
        #expect(!text.contains(#"measure="jitter""#), "no jitter budget, no series")
        #expect(!text.contains(#"reachd_target_impaired{target="plain"}"#), "no budget, no quality series")

        harness.monitor.update(links: .of(.usable()))
        let record = { (result: ProbeResult) in
            harness.clock.advance(by: .seconds(1))
            harness.record(result)
            harness.record(.ok("plain"))
        }
        for _ in 0..<3 { record(.ok("server", ms: 20)) }
        text = scrape()
        #expect(sample(text, #"reachd_quality{state="good"}"#) == 1)
        #expect(sample(text, #"reachd_quality{state="none"}"#) == 0)
        #expect(sample(text, #"reachd_target_quality_latency_seconds{target="server"}"#) == 0.02)
        #expect(sample(text, #"reachd_target_quality_loss_ratio{target="server"}"#) == 0)

        for _ in 0..<5 { record(.ok("server", ms: 450)) }
        text = scrape()
        #expect(sample(text, #"reachd_quality{state="impaired"}"#) == 1)
        #expect(sample(text, #"reachd_quality{state="good"}"#) == 0)
        #expect(sample(text, #"reachd_target_impaired{target="server"}"#) == 1)
        #expect(sample(text, #"reachd_target_quality_latency_seconds{target="server"}"#) == 0.45)
        #expect(text.contains("# HELP reachd_quality "))
        await harness.stop()
    }
}
