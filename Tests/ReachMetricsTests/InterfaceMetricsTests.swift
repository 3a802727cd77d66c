import ReachCore
import ReachMetrics
import ReachTesting
import Testing

/// `reachd_interface_reachable{interface}`: each uplink probed on its own, 1 or 0, absent while unknown.
@Suite("Metrics: each uplink")
struct InterfaceMetricsTests {
    @Test func eachUplinkHasASeriesOnceKnownAndLosesItWhenGone() async throws {
        let harness = MonitorHarness { $0.variants = ProbeVariantSettings(perInterface: true) }
        let metrics = ReachMetrics(targets: harness.targets)
        let follower = Task { await metrics.follow(harness.monitor) }
        try await waitUntil("the follower subscribed") { harness.monitor.subscriberCount == 1 }
        let scrape = { String(decoding: metrics.exposition(monitor: harness.monitor), as: UTF8.self) }
        let twoUplinks = LinkSnapshot.of(
            .usable("eth0", index: 2),
            .usable("wwan0", index: 3, address: "10.64.0.2/24", gateway: "10.64.0.1")
        )
        harness.monitor.update(links: twoUplinks)
        try await waitUntil("two uplinks") { harness.monitor.current.verdict.interfaces.count == 2 }
        harness.record(.ok("server"))
        #expect(!scrape().contains("reachd_interface_reachable{"), "unknown: no series yet")
        let epoch = harness.monitor.probeEpoch
        harness.monitor.record(
            .ok("server@eth0"),
            variant: ProbeVariant(target: "server", kind: .interface("eth0")),
            epoch: epoch
        )
        harness.monitor.record(
            .refused("server@wwan0"),
            variant: ProbeVariant(target: "server", kind: .interface("wwan0")),
            epoch: epoch
        )
        try await waitUntil("both uplinks in metrics") {
            sample(scrape(), #"reachd_interface_reachable{interface="wwan0"}"#) == 0
        }
        #expect(sample(scrape(), #"reachd_interface_reachable{interface="eth0"}"#) == 1)
        harness.monitor.update(links: .of(.usable("eth0", index: 2)))
        try await waitUntil("one uplink left: no series") {
            harness.clock.advance(by: .milliseconds(100))  // the settle window of a link change
            return !scrape().contains("reachd_interface_reachable{")
        }
        follower.cancel()
        await follower.value
        await harness.stop()
    }
}
