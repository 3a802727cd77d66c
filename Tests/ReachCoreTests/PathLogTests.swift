import Logging
import ReachCore
import ReachSupport
import ReachTesting
import Testing

/// What the journal is told of the paths: one line when an uplink's reachability changes, one
/// when a family of a target stops or starts answering again; none for a result that changes
/// nothing.
@Suite("Monitor: the paths in the log")
struct PathLogTests {
    private static func harness(_ logs: CapturedLogs) -> MonitorHarness {
        MonitorHarness(targets: [.http("api", host: "api.example")], logger: logs.logger) {
            $0.variants = ProbeVariantSettings(perInterface: true)
        }
    }

    private static func family(_ harness: MonitorHarness, _ result: ProbeResult, _ family: IPFamily) {
        harness.monitor.record(
            result,
            variant: ProbeVariant(target: "api", kind: .family(family)),
            epoch: harness.monitor.probeEpoch
        )
    }

    private static func lines(_ logs: CapturedLogs, about key: String) -> [CapturedLogs.Entry] {
        logs.all.filter { $0.metadata[key] != nil && $0.metadata["state"] == nil }
    }

    @Test func aFamilyThatStopsAnsweringIsToldOnceAndSoIsItsReturn() async {
        let logs = CapturedLogs()
        let harness = Self.harness(logs)
        harness.monitor.update(links: .of(InterfaceFacts.usable().dualStack))
        harness.record(.ok("api"))
        let timeout = ProbeResult.failure("api%ipv6", .timeout, phase: .connect, latency: .seconds(2))
        Self.family(harness, .ok("api%ipv4"), .ipv4)
        Self.family(harness, timeout, .ipv6)
        Self.family(harness, .ok("api%ipv4"), .ipv4)
        Self.family(harness, timeout, .ipv6)
        Self.family(harness, .ok("api%ipv6"), .ipv6)
        let lines = Self.lines(logs, about: "family")
        #expect(
            lines.map(\.message) == [
                "target api does not answer over ipv6, only over ipv4", "target api answers over ipv6 again",
            ]
        )
        #expect(lines.map(\.level) == [.warning, .notice])
        #expect(lines.map { $0.metadata["family"] } == ["ipv6", "ipv6"])
        #expect(harness.state == .connected, "a degraded family is no transition")
        await harness.stop()
    }

    @Test func bothFamiliesFailingIsTheTargetsNewsNotAFamilys() async {
        let logs = CapturedLogs()
        let harness = Self.harness(logs)
        harness.monitor.update(links: .of(InterfaceFacts.usable().dualStack))
        Self.family(harness, .refused("api%ipv4"), .ipv4)
        Self.family(harness, .refused("api%ipv6"), .ipv6)
        #expect(Self.lines(logs, about: "family").isEmpty)
        await harness.stop()
    }

    @Test func anUplinkThatStopsReachingTheTargetsIsToldOnceAndSoIsItsReturn() async {
        let logs = CapturedLogs()
        let harness = Self.harness(logs)
        harness.monitor.update(
            links: .of(
                .usable("eth0", index: 2),
                .usable("wwan0", index: 3, address: "10.64.0.2/24", gateway: "10.64.0.1")
            )
        )
        func uplink(_ result: ProbeResult, _ name: String) {
            harness.monitor.record(
                result,
                variant: ProbeVariant(target: "api", kind: .interface(name)),
                epoch: harness.monitor.probeEpoch
            )
        }
        uplink(.ok("api@eth0"), "eth0")
        uplink(.ok("api@wwan0"), "wwan0")
        uplink(.refused("api@wwan0"), "wwan0")
        uplink(.refused("api@wwan0"), "wwan0")
        uplink(.ok("api@wwan0"), "wwan0")
        let lines = Self.lines(logs, about: "interface")
        #expect(
            lines.map(\.message) == [
                "uplink eth0 reaches the targets", "uplink wwan0 reaches the targets",
                "uplink wwan0 does not reach the targets: connection_refused", "uplink wwan0 reaches the targets",
            ]
        )
        #expect(lines.map { $0.metadata["fault"] } == [nil, nil, "server", nil])
        await harness.stop()
    }
}
