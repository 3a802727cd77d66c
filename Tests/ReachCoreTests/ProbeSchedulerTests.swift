import Logging
import ReachCore
import ReachTesting
import Synchronization
import Testing

@Suite("Probe scheduler: cadence, suspension, immediate probes")
struct ProbeSchedulerTests {
    @Test func probesAtOnceOnStartThenOnceEveryInterval() async throws {
        let harness = SchedulerHarness(targets: [.http("server")])
        try await harness.waitForCalls(1)
        try await harness.advance(by: .milliseconds(3_000))
        #expect(harness.prober.callTimes == [.zero, .seconds(1), .seconds(2), .seconds(3)])
        #expect(harness.monitor.current.verdict.state == .connected)
        await harness.stop()
    }

    @Test func manyTargetsAreSpreadOverTheIntervalNotFiredInTheSameInstant() async throws {
        let targets = (0..<4).map { ProbeTarget.http("t\($0)") }
        let harness = SchedulerHarness(targets: targets)
        try await harness.advance(by: .milliseconds(10), step: .milliseconds(1))
        try await harness.advance(by: .milliseconds(1_990))
        // The start burst is staggered a millisecond apart...
        #expect(
            harness.prober.calls.prefix(4).map(\.at) == [.zero, .milliseconds(1), .milliseconds(2), .milliseconds(3)]
        )
        // ...and the cadence over the whole interval, each target on its own phase.
        let secondSecond = harness.prober.calls.filter { $0.at >= .seconds(1) && $0.at < .seconds(2) }
        #expect(
            secondSecond.map(\.at) == [
                .milliseconds(1_000), .milliseconds(1_250), .milliseconds(1_500), .milliseconds(1_750),
            ]
        )
        #expect(secondSecond.map(\.target) == ["t0", "t1", "t2", "t3"])
        await harness.stop()
    }

    /// 100 targets tick in 20 instants 50 ms apart, five per wake-up; 1,000 in 100 instants 10 ms
    /// apart, since no more than 10 share one.
    @Test(arguments: [(100, 20), (1_000, 100)])
    func ticksOfTargetsCloseInPhaseShareAWakeUpAndEachKeepsItsCadence(targetCount: Int, instantCount: Int) async throws
    {
        let targets = (0..<targetCount).map { ProbeTarget.http("t\($0)") }
        let harness = SchedulerHarness(targets: targets)
        try await harness.advance(by: .milliseconds(3_000), step: .milliseconds(10))
        let secondSecond = harness.prober.calls.filter { $0.at >= .seconds(1) && $0.at < .seconds(2) }
        #expect(secondSecond.count == targetCount)
        #expect(Set(secondSecond.map(\.target)).count == targetCount)
        let instants = Set(secondSecond.map(\.at)).sorted()
        #expect(instants == (0..<instantCount).map { .seconds(1) + .seconds(1) / instantCount * $0 })
        // Every target a second after its last probe, the next second too.
        let thirdSecond = harness.prober.calls.filter { $0.at >= .seconds(2) && $0.at < .seconds(3) }
        #expect(
            Dictionary(uniqueKeysWithValues: thirdSecond.map { ($0.target, $0.at - .seconds(1)) })
                == Dictionary(uniqueKeysWithValues: secondSecond.map { ($0.target, $0.at) })
        )
        await harness.stop()
    }

    @Test func withoutCoalescingEveryTargetHasAPhaseOfItsOwn() async throws {
        let targets = (0..<100).map { index in
            var target = ProbeTarget.http("t\(index)")
            target.coalescing = .zero
            return target
        }
        let harness = SchedulerHarness(targets: targets)
        try await harness.advance(by: .milliseconds(1_000), step: .milliseconds(10))
        try await harness.advance(by: .milliseconds(1_000), step: .milliseconds(1))
        let secondSecond = harness.prober.calls.filter { $0.at >= .seconds(1) && $0.at < .seconds(2) }
        #expect(Set(secondSecond.map(\.at)).count == 100, "10 ms apart, one target each")
        await harness.stop()
    }

    @Test func nothingIsProbedWithoutAUsableLinkAndTheLinkReturningProbesAtOnce() async throws {
        let harness = SchedulerHarness(targets: [.http("server")], links: .offline)
        try await harness.advance(by: .milliseconds(3_000))
        #expect(harness.prober.calls.isEmpty, "suspended: probes could only fail")
        #expect(harness.monitor.current.verdict.reason == .noLink)
        harness.monitor.update(links: .of(.usable()))
        try await harness.waitForCalls(1)
        #expect(harness.prober.callTimes == [.seconds(3)], "restoration probes at once, not at the next tick")
        try await harness.waitUntilConnected()
        await harness.stop()
    }

    @Test func systemSleepSuspendsProbingAndWakingProbesAtOnce() async throws {
        let harness = SchedulerHarness(targets: [.http("server")])
        try await harness.waitForCalls(1)
        harness.monitor.setSystemSleeping(true)
        try await harness.advance(by: .milliseconds(2_500))
        #expect(harness.prober.calls.count == 1)
        harness.monitor.setSystemSleeping(false)
        try await harness.waitForCalls(2)
        #expect(harness.prober.callTimes == [.zero, .milliseconds(2_500)])
        await harness.stop()
    }

    @Test func anImmediateRequestDuringAProbeStartsBesideItAtOnce() async throws {
        let harness = SchedulerHarness(targets: [.http("server")], holding: true)
        try await harness.waitForCalls(1)
        try await harness.advance(by: .milliseconds(300))
        harness.monitor.requestImmediateProbe()
        try await harness.waitForCalls(2)
        #expect(
            harness.prober.callTimes == [.zero, .milliseconds(300)],
            "the hanging probe does not hold the asked-for one back"
        )
        await harness.stop()
    }

    @Test func anImmediateRequestAtTheOverlapBoundRunsAsSoonAsAProbeEnds() async throws {
        let harness = SchedulerHarness(targets: [.http("server")], holding: true)
        try await harness.advance(by: .milliseconds(2_300))
        #expect(
            harness.prober.held("server") == [.zero, .seconds(1), .seconds(2)],
            "three in flight: the bound at 1 s / 2 s"
        )
        harness.monitor.requestImmediateProbe()
        try await harness.advance(by: .milliseconds(100))
        #expect(harness.prober.calls.count == 3, "no room: the immediate probe waits")
        harness.prober.finish(
            "server",
            startedAt: .zero,
            with: .failure("server", .timeout, phase: .head, latency: .seconds(2))
        )
        try await harness.waitForCalls(4)
        #expect(harness.prober.callTimes.last == .milliseconds(2_400))
        await harness.stop()
    }

    @Test func anImmediateRequestProbesEveryTargetOutsideTheCadence() async throws {
        let harness = SchedulerHarness(targets: [.http("a"), .http("b")])
        try await harness.advance(by: .milliseconds(200))
        let before = harness.prober.calls.count
        harness.monitor.requestImmediateProbe()
        try await harness.advance(by: .milliseconds(10), step: .milliseconds(1))
        #expect(harness.prober.calls.count == before + 2)
        // The request is taken when the scheduler sees it, within a step of the clock.
        let a = try #require(harness.prober.calls(of: "a").last)
        #expect(a >= .milliseconds(200) && a <= .milliseconds(201))
        let b = try #require(harness.prober.calls(of: "b").last)
        #expect(b >= a && b <= .milliseconds(202), "the burst is staggered by a millisecond")
        await harness.stop()
    }

    @Test func failuresReachTheVerdictWithTheirReason() async throws {
        let harness = SchedulerHarness(targets: [.http("server")])
        try await harness.waitUntilConnected()
        harness.prober.answer { .refused($0) }
        try await harness.advance(by: .milliseconds(1_000))
        #expect(harness.monitor.current.verdict.reason == .targetFailed(target: "server", reason: .connectionRefused))
        #expect(harness.observer.finished == 2)
        await harness.stop()
    }

    @Test func onTimeTicksReportZeroLateness() async throws {
        let harness = SchedulerHarness(targets: (0..<4).map { ProbeTarget.http("t\($0)") })
        try await harness.advance(by: .milliseconds(3_000))
        #expect(harness.observer.lateness.count >= 12)
        #expect(harness.observer.lateness.allSatisfy { $0 == .zero })
        await harness.stop()
    }

    @Test func watchedTargetsReportWhatTheServerPushesBetweenTicks() async throws {
        let harness = SchedulerHarness(targets: [.http("server")], watched: ["server"])
        try await harness.waitUntilConnected()
        try await waitUntil("the watch stream is open") { harness.prober.openStreamCount == 1 }
        harness.prober.push(.failure("server", .notServing, phase: .body, latency: .zero))
        #expect(harness.monitor.current.verdict.reason == .targetFailed(target: "server", reason: .notServing))
        #expect(harness.prober.calls.count == 1, "no poll was needed")
        await harness.stop()
    }

    @Test func aWatchStreamOpenedBeforeALinkChangeCannotVouchForTheNewLink() async throws {
        let harness = SchedulerHarness(targets: [.http("server")], watched: ["server"], holding: true)
        try await waitUntil("the watch stream is open") { harness.prober.openStreamCount == 1 }
        harness.monitor.update(links: .offline)
        harness.monitor.update(links: .of(.usable()))
        harness.prober.push(.ok("server"), stream: 0)
        #expect(
            harness.monitor.current.verdict.reason == .awaitingProbe,
            "a status from the stream opened before the loss is dropped"
        )
        harness.prober.release("server")
        await harness.stop()
    }

    @Test func aWatchStreamStaysClosedWhileProbingIsSuspended() async throws {
        let harness = SchedulerHarness(targets: [.http("server")], watched: ["server"])
        try await waitUntil("the watch stream is open") { harness.prober.openStreamCount == 1 }
        harness.monitor.update(links: .offline)
        try await waitUntil("the stream is closed while there is no link") { harness.prober.openStreamCount == 0 }
        harness.monitor.setSystemSleeping(true)
        harness.monitor.update(links: .of(.usable()))
        try await harness.advance(by: .milliseconds(3_000), step: .milliseconds(50))
        #expect(harness.prober.streams.count == 1, "no stream is opened while the link is gone or the system sleeps")
        harness.monitor.setSystemSleeping(false)
        try await waitUntil("probing resumed: the stream is open again") { harness.prober.openStreamCount == 1 }
        #expect(harness.prober.streams.count == 2)
        await harness.stop()
    }

    @Test func aLinkFlapReopensTheWatchStreamSoWhatItPushesCountsAgain() async throws {
        let harness = SchedulerHarness(targets: [.http("server")], watched: ["server"])
        try await harness.waitUntilConnected()
        try await waitUntil("the watch stream is open") { harness.prober.openStreamCount == 1 }
        // A flap the scheduler may see only as its end: the control goes straight to "usable again".
        harness.monitor.update(links: .offline)
        harness.monitor.update(links: .of(.usable()))
        try await waitUntil("a stream opened in the new epoch") {
            harness.prober.streams.last?.epoch == harness.monitor.probeEpoch && harness.prober.openStreamCount == 1
        }
        try await harness.waitUntilConnected()
        harness.prober.push(.failure("server", .notServing, phase: .body, latency: .zero))
        #expect(harness.monitor.current.verdict.reason == .targetFailed(target: "server", reason: .notServing))
        await harness.stop()
    }
}

extension SchedulerHarness {
    func waitUntilConnected() async throws {
        try await waitUntil("connected", timeout: .seconds(5)) { self.monitor.current.verdict.state == .connected }
    }
}
