import ReachCore
import ReachSupport
import ReachTesting
import Synchronization
import Testing

/// Issue 13: a probe hanging on a blackholed server must not hold back the probe that sees the
/// server come back. Probes of one target overlap (up to a bound), and results count in the order
/// their probes started.
@Suite("Probe scheduler: overlapping probes, results in start order")
struct ProbeOverlapTests {
    static let timedOut = ProbeResult.failure("server", .timeout, phase: .head, latency: .seconds(2))

    @Test func theServerComingBackIsSeenAtTheNextTickNotAfterTheHangingProbesDeadline() async throws {
        let harness = SchedulerHarness(targets: [.http("server")])
        try await harness.waitUntilConnected()
        // Blackholed from just after 0 s: every probe hangs until its 2 s deadline.
        harness.prober.hold()
        _ = try await harness.advanceToDeadlines(until: .milliseconds(4_500))
        #expect(harness.monitor.current.verdict.reason == .targetFailed(target: "server", reason: .timeout))
        #expect(
            harness.prober.calls(of: "server") == [.zero, .seconds(1), .seconds(2), .seconds(3), .seconds(4)],
            "a tick starts its probe while earlier ones hang"
        )
        #expect(harness.prober.held("server") == [.seconds(3), .seconds(4)])

        // The server answers again at 4.5 s; the probes started at 3 s and 4 s still hang.
        harness.prober.stopHolding()
        let restoredAt = harness.uptime
        let connectedAt = try await harness.advanceToDeadlines(until: .seconds(8)) {
            harness.monitor.current.verdict.state == .connected
        }
        let latency = try #require(connectedAt, "never connected again") - restoredAt
        #expect(latency <= .seconds(1), "connected \(latency) after the server came back: within one interval")

        // The hanging probes now reach their deadlines (5 s and 6 s): too old to count.
        _ = try await harness.advanceToDeadlines(until: .milliseconds(6_100))
        #expect(harness.prober.held("server").isEmpty)
        #expect(harness.monitor.current.verdict.state == .connected, "a late timeout never overrides a newer success")
        #expect(harness.observer.superseded.map(\.failure?.reason) == [.timeout, .timeout])
        #expect(harness.scheduler.supersededResults["server"] == 2)
        #expect(harness.scheduler.skippedTicks["server"] == 0, "at 1 s / 2 s a blackhole never fills the bound")
        await harness.stop()
    }

    @Test func ticksAreSkippedAndCountedOnlyOnceTheOverlapBoundIsReached() async throws {
        // A prober that ignores its deadline: the probes of 0, 1 and 2 s never end by themselves.
        let harness = SchedulerHarness(targets: [.http("server")], holding: true)
        try await harness.advance(by: .milliseconds(4_500))
        #expect(
            harness.prober.calls(of: "server") == [.zero, .seconds(1), .seconds(2)],
            "three in flight at 1 s / 2 s, no more"
        )
        #expect(harness.scheduler.skippedTicks["server"] == 2, "the ticks of 3 s and 4 s found the bound reached")
        #expect(harness.observer.skipped == 2)
        harness.prober.finish("server", startedAt: .zero, with: Self.timedOut)
        try await harness.advance(by: .milliseconds(600))
        #expect(harness.prober.calls(of: "server").last == .seconds(5), "room again: the next tick probes")
        #expect(harness.scheduler.skippedTicks["server"] == 2)
        await harness.stop()
    }

    @Test func aTimeoutWithinTheIntervalLeavesRoomForTwo() async throws {
        var target = ProbeTarget.http("server")
        target.timeout = .milliseconds(500)
        let harness = SchedulerHarness(targets: [target], holding: true)
        try await harness.advance(by: .milliseconds(2_500))
        #expect(harness.prober.calls(of: "server") == [.zero, .seconds(1)])
        #expect(harness.scheduler.skippedTicks["server"] == 1)
        await harness.stop()
    }

    @Test(arguments: [
        (interval: 1_000, timeout: 2_000, overlap: 3), (interval: 1_000, timeout: 1_000, overlap: 2),
        (interval: 1_000, timeout: 500, overlap: 2), (interval: 1_000, timeout: 1_500, overlap: 3),
        (interval: 100, timeout: 2_000, overlap: 3), (interval: 60_000, timeout: 10, overlap: 2),
    ])
    func theBoundCoversTheTimeoutInIntervalsPlusOneAtMostThree(interval: Int, timeout: Int, overlap: Int) {
        #expect(
            ProbeScheduler.maximumOverlap(interval: .milliseconds(interval), timeout: .milliseconds(timeout)) == overlap
        )
    }

    @Test func anOlderSuccessArrivingAfterANewerFailureIsDropped() async throws {
        let harness = SchedulerHarness(targets: [.http("server")])
        try await harness.waitUntilConnected()
        harness.prober.hold()
        try await harness.advance(by: .milliseconds(2_100))
        #expect(harness.prober.held("server") == [.seconds(1), .seconds(2)])
        harness.prober.finish("server", startedAt: .seconds(2), with: .refused("server"))
        try await waitUntil("the newer failure is applied") { harness.monitor.current.verdict.state == .disconnected }
        harness.prober.finish("server", startedAt: .seconds(1), with: .ok("server"))
        try await waitUntil("the older success is dropped") { harness.observer.superseded.count == 1 }
        #expect(harness.monitor.current.verdict.reason == .targetFailed(target: "server", reason: .connectionRefused))
        #expect(harness.observer.superseded.map(\.isSuccess) == [true])
        #expect(harness.scheduler.supersededResults["server"] == 1)
        await harness.stop()
    }

    @Test func resultsArrivingInStartOrderAreAllApplied() async throws {
        let harness = SchedulerHarness(targets: [.http("server")])
        try await harness.waitUntilConnected()
        harness.prober.hold()
        try await harness.advance(by: .milliseconds(2_100))
        harness.prober.finish("server", startedAt: .seconds(1), with: .refused("server"))
        try await waitUntil("the older failure is applied") { harness.monitor.current.verdict.state == .disconnected }
        harness.prober.finish("server", startedAt: .seconds(2), with: .ok("server"))
        try await harness.waitUntilConnected()
        #expect(harness.observer.superseded.isEmpty)
        await harness.stop()
    }

    @Test func theWatchdogWatchesEveryProbeInFlight() async throws {
        let harness = SchedulerHarness(targets: [.http("server")], holding: true)
        try await harness.advance(by: .milliseconds(1_500))
        harness.prober.finish("server", startedAt: .zero, with: Self.timedOut)
        try await harness.advance(by: .milliseconds(1_600))
        #expect(harness.prober.held("server") == [.seconds(1), .seconds(2), .seconds(3)])
        #expect(
            harness.scheduler.isMakingProgress(grace: .milliseconds(100)),
            "the probe of 1 s has run 2.1 s: within grace"
        )
        try await harness.advance(by: .milliseconds(100))
        #expect(
            !harness.scheduler.isMakingProgress(grace: .milliseconds(100)),
            "the probe of 1 s outlived its deadline"
        )
        await harness.stop()
    }

    @Test func cancellingTheSchedulerCancelsEveryOverlappingProbeAndWaitsForAllOfThem() async throws {
        let harness = SchedulerHarness(targets: [.http("server")], holding: true)
        harness.prober.answerCancellation(false)
        try await harness.advance(by: .milliseconds(2_300))
        #expect(harness.prober.held("server") == [.zero, .seconds(1), .seconds(2)])
        let ended = Flag()
        let stopping = Task {
            await harness.stopScheduling()
            ended.set()
        }
        try await waitUntil("every probe in flight was cancelled") { harness.prober.cancelRequests == 3 }
        for started in [Duration.zero, .seconds(1)] {
            harness.prober.finish(
                "server",
                startedAt: started,
                with: .failure("server", .cancelled, phase: .head, latency: .zero)
            )
            // The scheduler has taken the result, and with it decided whether run() may return.
            try await waitUntil("the scheduler took the cancelled result") { harness.prober.unsettled == 0 }
            #expect(!ended.isSet, "run() waits for every probe in flight, not only the first ones")
        }
        harness.prober.finish(
            "server",
            startedAt: .seconds(2),
            with: .failure("server", .cancelled, phase: .head, latency: .zero)
        )
        await stopping.value
        #expect(ended.isSet)
        #expect(harness.monitor.current.verdict.reason == .awaitingProbe, "cancelled probes are no evidence")
        await harness.stop()
    }
}

/// Set once, read from anywhere.
private final class Flag: Sendable {
    private let state = Mutex(false)
    var isSet: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}

extension SchedulerHarness {
    var uptime: Duration { clock.now.offset }

    /// Advances the clock to `end` in 5 ms steps as a blackhole would: after each step, every held
    /// probe that has run its 2 s timeout ends with `timeout` (a tick due at the same instant fires
    /// first, as the probe's deadline falls a hair after it). Returns the first moment `stop` held.
    func advanceToDeadlines(until end: Duration, stop: () -> Bool = { false }) async throws -> Duration? {
        while uptime < end {
            try await advance(by: .milliseconds(5))
            let expired = prober.held("server").filter { uptime - $0 >= .seconds(2) }
            for started in expired {
                prober.finish("server", startedAt: started, with: ProbeOverlapTests.timedOut)
            }
            if !expired.isEmpty { try await settle() }
            if stop() { return uptime }
        }
        return nil
    }
}
