import ReachCore
import ReachMetrics
import ReachTesting
import Testing

@Suite("Metrics across a reload")
struct ReachMetricsReloadTests {
    private func scrape(_ metrics: ReachMetrics, _ harness: MonitorHarness) -> String {
        String(decoding: metrics.exposition(monitor: harness.monitor), as: UTF8.self)
    }

    @Test func addedTargetsGetSeriesAndRemovedTargetsLoseThem() async {
        let harness = MonitorHarness(targets: [.http("a"), .http("b")])
        let metrics = ReachMetrics(targets: harness.targets)
        metrics.probeFinished(.http("b"), result: .refused("b"))
        var text = scrape(metrics, harness)
        #expect(sample(text, #"reachd_probe_success{target="b"}"#) == 0)

        metrics.reconfigure(targets: [.http("a"), .http("c")], interfaces: InterfaceFilter())
        text = scrape(metrics, harness)
        #expect(sample(text, #"reachd_probe_success{target="b"}"#) == nil, "no alert keeps firing on a removed target")
        #expect(
            sample(text, #"reachd_probe_success{target="c"}"#) == 0,
            "a new target's series exist before its first probe"
        )
        #expect(sample(text, #"reachd_probes_total{target="c",result="success"}"#) == 0)

        metrics.probeFinished(.http("b"), result: .ok("b"))
        text = scrape(metrics, harness)
        #expect(
            sample(text, #"reachd_probe_success{target="b"}"#) == nil,
            "a late result for a removed target makes no series"
        )
        await harness.stop()
    }

    @Test func aCancelledProbeIsNotCounted() async {
        let harness = MonitorHarness(targets: [.http("a")])
        let metrics = ReachMetrics(targets: harness.targets)
        metrics.probeFinished(.http("a"), result: .ok("a"))
        metrics.probeFinished(.http("a"), result: .failure("a", .cancelled, latency: .milliseconds(3)))
        let text = scrape(metrics, harness)
        #expect(
            sample(text, #"reachd_probe_success{target="a"}"#) == 1,
            "a reload or a stop cancelling a probe says nothing of the target"
        )
        #expect(sample(text, #"reachd_probes_total{target="a",result="cancelled"}"#) == nil)
        await harness.stop()
    }
}
