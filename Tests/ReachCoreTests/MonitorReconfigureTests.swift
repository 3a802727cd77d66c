import Logging
import ReachCore
import ReachSupport
import ReachTesting
import Testing

@Suite("Monitor: a reloaded configuration")
struct MonitorReconfigureTests {
    private func configuration(
        _ targets: [ProbeTarget],
        policy: TargetPolicy = .all
    ) -> ConnectivityMonitor.Configuration {
        var configuration = ConnectivityMonitor.Configuration(targets: targets)
        configuration.policy = policy
        return configuration
    }

    @Test func anUnchangedTargetKeepsItsStatusAChangedOneStartsOverAndARemovedOneIsForgotten() async {
        let harness = MonitorHarness(targets: [.http("a"), .http("b"), .http("c")])
        harness.monitor.update(links: .of(.usable()))
        harness.record(.ok("a"))
        harness.record(.ok("b"))
        harness.record(.refused("c"))
        #expect(harness.reason == .targetFailed(target: "c", reason: .connectionRefused))
        let before = harness.monitor.current.verdict.targets

        harness.monitor.reconfigure(configuration([.http("a"), .http("b", host: "203.0.113.99"), .http("d")]))
        let after = harness.monitor.current.verdict.targets
        #expect(after.map(\.name) == ["a", "b", "d"])
        #expect(after[0] == before[0], "a is unchanged: its status, counts and last result stay")
        #expect(after[1].health == .unknown && after[1].lastResult == nil, "b's URL changed: it starts over")
        #expect(after[2].health == .unknown, "d is new")
        #expect(harness.reason == .awaitingProbe, "the failing c is gone; b and d have not answered yet")
        #expect(harness.state == .disconnected)
        #expect(harness.monitor.targets.map(\.name) == ["a", "b", "d"])
        await harness.stop()
    }

    @Test func aProbeThatStartedUnderTheOldDefinitionCannotCountForTheNewOne() async {
        let harness = MonitorHarness(targets: [.http("server")])
        harness.monitor.update(links: .of(.usable()))
        let oldEpoch = harness.monitor.probeEpoch
        let requests = harness.monitor.currentProbeControl.immediateProbeRequests
        harness.monitor.reconfigure(configuration([.http("server", host: "203.0.113.99")]))
        harness.monitor.record(.ok("server"), epoch: oldEpoch)
        #expect(harness.state == .unknown, "the old URL's answer is dropped")
        #expect(
            harness.monitor.currentProbeControl.immediateProbeRequests == requests + 1,
            "the new definition is probed at once"
        )
        harness.record(.ok("server"))
        #expect(harness.state == .connected)
        await harness.stop()
    }

    @Test func removingTheFailingTargetRestoresConnectivityAndRunsRestorationCallbacksOnce() async throws {
        let harness = MonitorHarness(targets: [.http("a"), .http("b")])
        harness.monitor.update(links: .of(.usable()))
        harness.record(.ok("a"))
        harness.record(.ok("b"))
        harness.record(.refused("b"))
        #expect(harness.state == .disconnected)
        let log = CallbackLog()
        harness.monitor.onConnectivityRestored(named: "warm") { log.append("warm", $0) }
        var events = harness.monitor.subscribe().makeAsyncIterator()
        #expect(await events.next()?.verdict.state == .disconnected)

        harness.monitor.reconfigure(configuration([.http("a")]))
        let restored = await events.next()
        #expect(restored?.verdict.state == .connected, "the same subscription sees the new verdict")
        try await waitUntil("the restoration callback") { log.count == 1 }
        #expect(log.sequences(of: "warm") == [restored?.sequence ?? 0])
        await harness.stop()
    }

    @Test func aNewPolicyIsDecidedAtOnce() async {
        let harness = MonitorHarness(targets: [.http("a"), .http("b")])
        harness.monitor.update(links: .of(.usable()))
        harness.record(.ok("a"))
        harness.record(.refused("b"))
        #expect(harness.state == .disconnected)
        harness.monitor.reconfigure(configuration([.http("a"), .http("b")], policy: .any))
        #expect(harness.state == .connected)
        #expect(harness.monitor.current.verdict.targets.map(\.health) == [.healthy, .unhealthy], "no target was reset")
        await harness.stop()
    }

    @Test func targetsGoingDownAndComingBackAreLoggedAsEventsWithTheirOwnKind() async {
        let logs = CapturedLogs()
        let harness = MonitorHarness(targets: [.http("a"), .http("b")], logger: logs.logger) { $0.policy = .any }
        harness.monitor.update(links: .of(.usable()))
        harness.record(.ok("a"))  // from unknown: a first finding, not an event
        harness.record(.ok("b"))
        harness.record(.refused("b"))
        harness.record(.ok("b"))
        harness.monitor.update(links: .of(InterfaceFacts.usable().withoutCarrier))
        let events = logs.all.compactMap { entry in entry.metadata[ReachLogEvent.metadataKey].map { ("\($0)", entry) } }
        #expect(events.map(\.0) == ["target_down", "target_up", "connectivity_lost"])
        #expect(events[0].1.level == .warning && events[0].1.message == "target b down: connection_refused")
        #expect(events[0].1.metadata["reason"] == "connection_refused")
        #expect(events[1].1.level == .notice && events[1].1.metadata["latency_ms"] == "5.0")
        #expect(events[2].1.metadata["previous_state"] == "connected")
        await harness.stop()
    }
}
