import Logging
import ReachConfig
import ReachCore
import ReachEngine
import ReachSupport
import ReachTesting
import Testing

/// A prober that answers every probe at once: the engine's surroundings, not the engine.
private struct AnsweringProber: Prober {
    func probe(_ target: ProbeTarget) async -> ProbeResult { .ok(target.name) }
}

/// The engine takes a new configuration while it runs: what it applies, what it names as needing
/// a restart, and the check-wait limit it answers with.
@Suite("The engine applies a configuration while it runs")
struct EngineApplyTests {
    @Test func appliesTargetsAndPolicyLiveNamesTheRestAndMovesTheCheckWaitLimit() async throws {
        let links = InMemoryLinkSource(initial: .of(.usable()))
        let engine = ConnectivityEngine(
            configuration: Configuration(targets: [.http("a")], linkSettleWindow: .zero),
            linkSource: links,
            prober: AnsweringProber(),
            logger: .quiet
        )
        let running = Task { try await engine.run() }
        defer { running.cancel() }
        try await waitUntil("the first verdict", timeout: .seconds(10)) {
            engine.monitor.current.verdict.state == .connected
        }
        #expect(engine.checkWaitLimit == .seconds(3), "the default 2 s timeout and a second")

        var new = Configuration(targets: [.http("a"), .http("b")], policy: .any, linkSettleWindow: .zero)
        new.targets[0].timeout = .seconds(10)
        new.upstream = .none
        let change = await engine.apply(new)
        #expect(change.addedTargets == ["b"])
        #expect(change.changedTargets == ["a"])
        #expect(change.needsRestart == ["upstream.check"])
        #expect(change.targetsChanged && change.appliesLive)
        #expect(change.checkWaitLimit == .seconds(11))
        #expect(engine.checkWaitLimit == .seconds(11))
        #expect(engine.monitor.targets.map(\.name) == ["a", "b"])
        // The new targets are probed at once, by the new scheduler.
        try await waitUntil("both targets answered", timeout: .seconds(10)) {
            engine.monitor.current.verdict.targets.map(\.health) == [.healthy, .healthy]
        }

        let again = await engine.apply(new)
        #expect(!again.targetsChanged && !again.appliesLive && again.needsRestart.isEmpty)
        #expect(again.checkWaitLimit == .seconds(11))
    }

    @Test func aConfigurationAppliedBeforeTheEngineRunsIsTheOneItProbes() async throws {
        let engine = ConnectivityEngine(
            configuration: Configuration(targets: [.http("a")], linkSettleWindow: .zero),
            linkSource: InMemoryLinkSource(initial: .of(.usable())),
            prober: AnsweringProber(),
            logger: .quiet
        )
        _ = await engine.apply(Configuration(targets: [.http("b")], linkSettleWindow: .zero))
        let running = Task { try await engine.run() }
        defer { running.cancel() }
        try await waitUntil("b answered", timeout: .seconds(10)) {
            engine.monitor.current.verdict.targets.map(\.name) == ["b"]
                && engine.monitor.current.verdict.state == .connected
        }
    }
}
