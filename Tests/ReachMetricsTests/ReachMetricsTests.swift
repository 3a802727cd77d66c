import Foundation
import ReachCore
import ReachMetrics
import ReachSupport
import ReachTesting
import Synchronization
import Testing

@Suite("ReachMetrics: Prometheus exposition")
struct ReachMetricsTests {
    private func scrape(_ metrics: ReachMetrics, _ harness: MonitorHarness) -> String {
        String(decoding: metrics.exposition(monitor: harness.monitor), as: UTF8.self)
    }

    /// Metrics following the harness's monitor, once they show it connected.
    private func followedConnected(_ harness: MonitorHarness) async throws -> (ReachMetrics, Task<Void, Never>) {
        let metrics = ReachMetrics(targets: harness.targets)
        let follower = Task { await metrics.follow(harness.monitor) }
        try await waitUntil("the follower subscribed") { harness.monitor.subscriberCount == 1 }
        harness.connect()
        try await waitUntil("connected in metrics") { sample(self.scrape(metrics, harness), "reachd_connected") == 1 }
        return (metrics, follower)
    }

    @Test func everySeriesExistsFromTheStart() async {
        let harness = MonitorHarness(targets: [.http("server"), .http("backup", host: "203.0.113.11")])
        let metrics = ReachMetrics(targets: harness.targets)
        let text = scrape(metrics, harness)
        for series in [
            "reachd_connected", "reachd_link_usable", "reachd_subscribers", "reachd_netlink_overruns_total",
            "reachd_heap_trims_total", "reachd_last_transition_timestamp_seconds",
            #"reachd_build_info{version="\#(ReachVersion.current)"}"#,
            #"reachd_probe_success{target="server"}"#, #"reachd_probe_success{target="backup"}"#,
            #"reachd_probes_total{target="server",result="success"}"#, #"reachd_probe_skipped_total{target="backup"}"#,
            #"reachd_probe_duration_seconds_count{target="server"}"#,
            #"reachd_probe_duration_seconds_bucket{target="server",le="0.0025"}"#,
            #"reachd_probe_duration_seconds_bucket{target="server",le="2.5"}"#,
            #"reachd_restoration_callbacks_total{result="ok"}"#,
            #"reachd_restoration_callbacks_total{result="timed_out"}"#,
        ] {
            #expect(sample(text, series) != nil, "\(series) missing from:\n\(text)")
        }
        #expect(sample(text, #"reachd_build_info{version="\#(ReachVersion.current)"}"#) == 1)
        for name in [
            "reachd_connected", "reachd_state_changes_total", "reachd_link_usable", "reachd_link_up",
            "reachd_probe_success",
            "reachd_probe_duration_seconds", "reachd_probes_total", "reachd_probe_skipped_total",
            "reachd_restoration_callbacks_total",
            "reachd_subscribers", "reachd_heap_trims_total", "reachd_netlink_overruns_total",
            "reachd_last_transition_timestamp_seconds", "reachd_build_info",
        ] where name != "reachd_state_changes_total" && name != "reachd_link_up" {
            #expect(text.contains("# HELP \(name) "), "\(name) has help text")
        }
        await harness.stop()
    }

    @Test func failureAndStateChangeSeriesStartAtZeroSoIncreaseSeesTheFirstOne() async {
        let harness = MonitorHarness(targets: [.http("server")])
        let metrics = ReachMetrics(targets: harness.targets)
        let text = scrape(metrics, harness)
        for result in [
            "connection_refused", "timeout", "dns_failure", "http_status", "tls_failure", "not_serving",
            "protocol_error",
        ] {
            #expect(sample(text, #"reachd_probes_total{target="server",result="\#(result)"}"#) == 0, "\(result)")
        }
        #expect(
            sample(text, #"reachd_probes_total{target="server",result="cancelled"}"#) == nil,
            "a cancelled probe is never counted"
        )
        for (to, reason, fault) in [
            ("connected", "healthy", "none"), ("disconnected", "no_link", "link"), ("disconnected", "no_route", "link"),
            ("disconnected", "awaiting_probe", "none"), ("disconnected", "connection_refused", "server"),
            ("disconnected", "timeout", "server"),
            ("disconnected", "timeout", "gateway"), ("disconnected", "timeout", "upstream"),
            ("disconnected", "dns_failure", "dns"),
            ("disconnected", "captive_portal", "portal"),
        ] {
            #expect(
                sample(text, #"reachd_state_changes_total{to="\#(to)",reason="\#(reason)",fault="\#(fault)"}"#) == 0,
                "\(to) \(reason) \(fault)"
            )
        }
        #expect(!text.contains(#"to="unknown""#), "the verdict never returns to unknown")
        let stateChangeSeries = text.split(separator: "\n").filter { $0.hasPrefix("reachd_state_changes_total{") }
        // connected/healthy; disconnected with no_link, no_address, no_route, captive_portal, awaiting_probe, one of seven
        // answers (server) or timeout, network_unreachable, dns_failure with each of three faults or none (not known yet):
        // 25. A dns target's: six resolver answers and no_resolver (dns), and dns for what would be server (timeout,
        // network_unreachable, connection_refused, connection_reset, protocol_error): 12. An icmp target's:
        // not_permitted (none), destination_unreachable and time_exceeded like a timeout (4 each): 9.
        #expect(stateChangeSeries.count == 46, "a bounded set: \(stateChangeSeries)")
        await harness.stop()
    }

    @Test func followingTheMonitorTracksTheVerdictAndStateChanges() async throws {
        let harness = MonitorHarness()
        let metrics = ReachMetrics(targets: harness.targets)
        let follower = Task { await metrics.follow(harness.monitor) }
        try await waitUntil("the follower subscribed") { harness.monitor.subscriberCount == 1 }
        var text = scrape(metrics, harness)
        #expect(sample(text, "reachd_connected") == 0)
        #expect(sample(text, "reachd_subscribers") == 1)

        harness.connect()
        try await waitUntil("connected in metrics") { sample(self.scrape(metrics, harness), "reachd_connected") == 1 }
        text = scrape(metrics, harness)
        #expect(sample(text, "reachd_link_usable") == 1)
        #expect(
            sample(text, #"reachd_link_up{interface="eth0",kind="unknown"}"#) == 1,
            "from the verdict until links are reported"
        )
        #expect(sample(text, #"reachd_state_changes_total{to="connected",reason="healthy",fault="none"}"#) == 1)
        #expect(
            sample(text, "reachd_last_transition_timestamp_seconds") == harness.clock.wallTimeAtStart.secondsSinceEpoch
        )

        harness.clock.advance(by: .seconds(2))
        harness.record(.refused("server"))
        try await waitUntil("disconnected in metrics") {
            sample(self.scrape(metrics, harness), "reachd_connected") == 0
        }
        text = scrape(metrics, harness)
        #expect(
            sample(text, #"reachd_state_changes_total{to="disconnected",reason="connection_refused",fault="server"}"#)
                == 1
        )
        #expect(
            sample(text, "reachd_last_transition_timestamp_seconds") == harness.clock.wallTimeAtStart.secondsSinceEpoch
                + 2
        )

        harness.monitor.update(links: .offline)
        try await waitUntil("link loss in metrics") { sample(self.scrape(metrics, harness), "reachd_link_usable") == 0 }
        text = scrape(metrics, harness)
        #expect(sample(text, #"reachd_link_up{interface="eth0",kind="unknown"}"#) == 0)
        #expect(
            sample(text, #"reachd_state_changes_total{to="disconnected",reason="connection_refused",fault="server"}"#)
                == 1,
            "no state change, no count"
        )

        follower.cancel()
        await follower.value
        await harness.stop()
    }

    /// A fleet's rules count hosts per fault and per failing target: one series per fault, exactly
    /// one of them 1, and the failing target's flag, from the start and through every change.
    @Test func theFaultAndTheFailingTargetAreAStateSet() async throws {
        let harness = MonitorHarness(targets: [.http("server"), .http("backup", host: "203.0.113.11")])
        let metrics = ReachMetrics(targets: harness.targets)
        let follower = Task { await metrics.follow(harness.monitor) }
        try await waitUntil("the follower subscribed") { harness.monitor.subscriberCount == 1 }
        let faults = ["none", "link", "gateway", "dns", "upstream", "server", "portal"]
        func expectFault(_ expected: String, failing: String?, _ comment: Comment) {
            let text = scrape(metrics, harness)
            for fault in faults {
                #expect(
                    sample(text, #"reachd_fault{fault="\#(fault)"}"#) == (fault == expected ? 1 : 0),
                    "\(fault): \(comment)"
                )
            }
            for target in ["server", "backup"] {
                #expect(
                    sample(text, #"reachd_failing_target{target="\#(target)"}"#) == (target == failing ? 1 : 0),
                    "\(target): \(comment)"
                )
            }
        }
        expectFault("none", failing: nil, "before the first verdict")

        harness.connect()
        harness.record(.ok("backup"))
        try await waitUntil("connected in metrics") { sample(self.scrape(metrics, harness), "reachd_connected") == 1 }
        expectFault("none", failing: nil, "connected")

        harness.record(.refused("backup"))
        try await waitUntil("disconnected in metrics") {
            sample(self.scrape(metrics, harness), #"reachd_fault{fault="server"}"#) == 1
        }
        expectFault("server", failing: "backup", "refused by backup")

        harness.monitor.update(links: .offline)
        try await waitUntil("link loss in metrics") {
            sample(self.scrape(metrics, harness), #"reachd_fault{fault="link"}"#) == 1
        }
        expectFault("link", failing: nil, "no link: no target is to blame")

        follower.cancel()
        await follower.value
        await harness.stop()
    }

    @Test func theInterfaceBehindACaptivePortalIsTold() async throws {
        let harness = MonitorHarness()
        let (metrics, follower) = try await followedConnected(harness)
        #expect(sample(scrape(metrics, harness), #"reachd_captive_portal{interface="eth0"}"#) == 0)

        harness.monitor.update(
            portalAPI: CaptivePortalAPIAnswer(isCaptive: true, userPortalURL: "https://portal.example/"),
            interface: "eth0"
        )
        try await waitUntil("the portal in metrics") {
            sample(self.scrape(metrics, harness), #"reachd_captive_portal{interface="eth0"}"#) == 1
        }
        var text = scrape(metrics, harness)
        #expect(
            sample(text, #"reachd_state_changes_total{to="disconnected",reason="captive_portal",fault="portal"}"#) == 1
        )

        harness.monitor.update(portalAPI: CaptivePortalAPIAnswer(isCaptive: false), interface: "eth0")
        try await waitUntil("signed in, in metrics") { sample(self.scrape(metrics, harness), "reachd_connected") == 1 }
        text = scrape(metrics, harness)
        #expect(sample(text, #"reachd_captive_portal{interface="eth0"}"#) == 0)
        harness.monitor.update(links: .offline)
        try await waitUntil("link loss in metrics") { sample(self.scrape(metrics, harness), "reachd_link_usable") == 0 }
        #expect(
            !scrape(metrics, harness).contains("reachd_captive_portal{"),
            "an interface no longer usable has no series"
        )
        follower.cancel()
        await follower.value
        await harness.stop()
    }

    @Test func aScrapeSeesEachVerdictWhole() async throws {
        let harness = MonitorHarness()
        let (metrics, follower) = try await followedConnected(harness)
        let portal = #"reachd_captive_portal{interface="eth0"}"#
        let toPortal = #"reachd_state_changes_total{to="disconnected",reason="captive_portal",fault="portal"}"#
        let toConnected = #"reachd_state_changes_total{to="connected",reason="healthy",fault="none"}"#
        let start = scrape(metrics, harness)
        let signedIn = (sample(start, toConnected) ?? 0) - (sample(start, toPortal) ?? 0)

        // A portal comes and goes while a scraper reads as fast as it can, on threads of their own.
        let flips = 400
        let done = Atomic<Bool>(false)
        async let halves: [String] = offPool {
            var halves: [String] = []
            while !done.load(ordering: .acquiring) {
                let text = self.scrape(metrics, harness)
                let (connected, behindPortal) = (sample(text, "reachd_connected"), sample(text, portal))
                let changes = (sample(text, toConnected) ?? 0) - (sample(text, toPortal) ?? 0)
                if connected != 1 - (behindPortal ?? 0) || changes != signedIn - (behindPortal ?? 0) {
                    halves.append("connected \(connected ?? -1), portal \(behindPortal ?? -1), changes \(changes)")
                }
            }
            return halves
        }
        await offPool {
            for flip in 0..<flips {
                harness.monitor.update(portalAPI: CaptivePortalAPIAnswer(isCaptive: flip % 2 == 0), interface: "eth0")
            }
        }
        try await waitUntil("the last flip in metrics") {
            sample(self.scrape(metrics, harness), "reachd_connected") == 1
                && sample(self.scrape(metrics, harness), portal) == 0
        }
        done.store(true, ordering: .releasing)
        let seen = await halves
        #expect(seen.isEmpty, "\(seen.count) scrapes saw half a verdict: \(seen.prefix(5))")
        follower.cancel()
        await follower.value
        await harness.stop()
    }

    @Test func probesAreCountedByResult() async {
        let harness = MonitorHarness()
        let metrics = ReachMetrics(targets: harness.targets)
        let target = harness.targets[0]
        metrics.probeStarted(target, lateness: .zero)
        metrics.probeFinished(target, result: .ok("server", ms: 3))
        metrics.probeFinished(target, result: .ok("server", ms: 30))
        var text = scrape(metrics, harness)
        #expect(sample(text, #"reachd_probe_success{target="server"}"#) == 1)
        #expect(sample(text, #"reachd_probes_total{target="server",result="success"}"#) == 2)
        #expect(sample(text, #"reachd_probe_duration_seconds_count{target="server"}"#) == 2)
        #expect(sample(text, #"reachd_probe_duration_seconds_bucket{target="server",le="0.005"}"#) == 1)
        #expect(sample(text, #"reachd_probe_duration_seconds_bucket{target="server",le="0.05"}"#) == 2)
        #expect(sample(text, #"reachd_probe_duration_seconds_sum{target="server"}"#) == 0.033)

        metrics.probeFinished(target, result: .refused("server"))
        metrics.probeFinished(target, result: .failure("server", .timeout, phase: .tls, latency: .seconds(2)))
        metrics.probeSkipped(target)
        text = scrape(metrics, harness)
        #expect(sample(text, #"reachd_probe_success{target="server"}"#) == 0)
        #expect(sample(text, #"reachd_probes_total{target="server",result="connection_refused"}"#) == 1)
        #expect(sample(text, #"reachd_probes_total{target="server",result="timeout"}"#) == 1)
        #expect(
            sample(text, #"reachd_probe_duration_seconds_count{target="server"}"#) == 4,
            "failed probes are timed too"
        )
        #expect(sample(text, #"reachd_probe_skipped_total{target="server"}"#) == 1)
        await harness.stop()
    }

    @Test func aSupersededProbeIsCountedButLeavesTheSuccessGaugeToTheNewerResult() async throws {
        let harness = MonitorHarness { $0.linkSettleWindow = .zero }
        let metrics = ReachMetrics(targets: harness.targets)
        let target = harness.targets[0]
        metrics.probeFinished(target, result: .ok("server", ms: 3))
        // An older probe of a blackholed server times out after the newer success was applied.
        metrics.probeSuperseded(target, result: .failure("server", .timeout, phase: .head, latency: .seconds(2)))
        let text = scrape(metrics, harness)
        #expect(sample(text, #"reachd_probe_success{target="server"}"#) == 1, "the gauge keeps the newer success")
        #expect(
            sample(text, #"reachd_probes_total{target="server",result="timeout"}"#) == 1,
            "the probe ran: it is counted"
        )
        #expect(sample(text, #"reachd_probe_duration_seconds_count{target="server"}"#) == 2)
        await harness.stop()
    }

    @Test func restorationCallbacksAreCountedByOutcome() async throws {
        let harness = MonitorHarness { $0.linkSettleWindow = .zero }
        let metrics = ReachMetrics(targets: harness.targets)
        harness.monitor.onConnectivityRestored(named: "fine") { _ in }
        harness.monitor.onConnectivityRestored(named: "broken") { _ in throw CancellationError() }
        harness.monitor.onConnectivityLost(named: "not-counted") { _ in }
        let follower = Task { await metrics.follow(harness.monitor) }
        try await waitUntil("the follower subscribed") { harness.monitor.subscriberCount == 1 }
        harness.connect()
        harness.monitor.update(links: .offline)
        harness.monitor.update(links: .of(.usable()))
        harness.record(.ok("server"))
        try await waitUntil("both callbacks counted") {
            let text = self.scrape(metrics, harness)
            return sample(text, #"reachd_restoration_callbacks_total{result="ok"}"#) == 1
                && sample(text, #"reachd_restoration_callbacks_total{result="failed"}"#) == 1
        }
        #expect(sample(scrape(metrics, harness), #"reachd_restoration_callbacks_total{result="timed_out"}"#) == 0)
        follower.cancel()
        await follower.value
        await harness.stop()
    }

    @Test func linkSnapshotsCoverEveryInterfaceAndForgetVanishedOnes() async {
        let harness = MonitorHarness()
        let metrics = ReachMetrics(targets: harness.targets)
        metrics.update(
            links: .of(.usable(), InterfaceFacts.usable("wlan0", index: 3).withoutCarrier.with { $0.kind = .wifi })
        )
        var text = scrape(metrics, harness)
        #expect(sample(text, #"reachd_link_up{interface="eth0",kind="ethernet"}"#) == 1)
        #expect(sample(text, #"reachd_link_up{interface="wlan0",kind="wifi"}"#) == 0)
        #expect(!text.contains(#"interface="lo""#), "loopback is not a link")
        metrics.update(links: .of(.usable()))
        text = scrape(metrics, harness)
        #expect(sample(text, #"reachd_link_up{interface="eth0",kind="ethernet"}"#) == 1)
        #expect(!text.contains("wlan0"), "a vanished interface's series is dropped")
        await harness.stop()
    }

    @Test func excludedInterfacesGetNoSeries() async {
        let harness = MonitorHarness()
        let metrics = ReachMetrics(targets: harness.targets, interfaces: InterfaceFilter())
        metrics.update(
            links: .of(
                .usable(),
                InterfaceFacts.usable("veth3f2a1b", index: 7),
                InterfaceFacts.usable("docker0", index: 8)
            )
        )
        let text = scrape(metrics, harness)
        #expect(sample(text, #"reachd_link_up{interface="eth0",kind="ethernet"}"#) == 1)
        #expect(
            !text.contains("veth3f2a1b") && !text.contains("docker0"),
            "container plumbing is excluded by default, and gets no series"
        )
        await harness.stop()
    }

    @Test func netlinkOverrunsFollowTheRunningTotal() async {
        let harness = MonitorHarness()
        let metrics = ReachMetrics(targets: harness.targets)
        metrics.setNetlinkOverruns(2)
        metrics.setNetlinkOverruns(5)
        #expect(sample(scrape(metrics, harness), "reachd_netlink_overruns_total") == 5)
        metrics.setNetlinkOverruns(1)
        #expect(
            sample(scrape(metrics, harness), "reachd_netlink_overruns_total") == 5,
            "a restarted source never makes the counter go down"
        )
        metrics.setNetlinkOverruns(3)
        #expect(sample(scrape(metrics, harness), "reachd_netlink_overruns_total") == 7)
        await harness.stop()
    }

    @Test func netlinkOverrunsAreReadAtEveryScrape() async {
        let harness = MonitorHarness()
        let metrics = ReachMetrics(targets: harness.targets)
        let socketTotal = Atomic<Int>(0)
        metrics.sampleNetlinkOverruns { socketTotal.load(ordering: .relaxed) }
        #expect(sample(scrape(metrics, harness), "reachd_netlink_overruns_total") == 0)
        // A burst that changes no snapshot: only the scrape can see it.
        socketTotal.store(4, ordering: .relaxed)
        #expect(sample(scrape(metrics, harness), "reachd_netlink_overruns_total") == 4)
        await harness.stop()
    }

    @Test(
        .enabled(
            if: Promtool.path != nil,
            "promtool is not installed (Debian package `prometheus`); the CI script installs it"
        )
    )
    func promtoolFindsNothingToComplainAbout() async throws {
        let harness = MonitorHarness(targets: [.http("server"), .http("backup", host: "203.0.113.11")])
        let metrics = ReachMetrics(targets: harness.targets)
        let follower = Task { await metrics.follow(harness.monitor) }
        try await waitUntil("the follower subscribed") { harness.monitor.subscriberCount == 1 }
        harness.monitor.onConnectivityRestored { _ in }
        metrics.update(links: .of(.usable()))
        metrics.setNetlinkOverruns(1)
        harness.connect()
        harness.record(.ok("backup"))
        for result in [
            ProbeResult.ok("server"), .refused("backup"),
            .failure("server", .httpStatus(503), latency: .milliseconds(40)),
        ] {
            metrics.probeFinished(harness.targets.first { $0.name == result.target }!, result: result)
        }
        metrics.probeSkipped(harness.targets[1])
        try await waitUntil("a state change counted") {
            self.scrape(metrics, harness).contains("reachd_state_changes_total{")
        }
        let exposition = scrape(metrics, harness)
        let (status, output) = try await Promtool.checkMetrics(exposition)
        #expect(status == 0, "promtool exit status")
        #expect(output.isEmpty, "promtool says:\n\(output)\nabout:\n\(exposition)")
        follower.cancel()
        await follower.value
        await harness.stop()
    }
}
