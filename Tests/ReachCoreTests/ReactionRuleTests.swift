import Logging
import ReachCore
import ReachSupport
import ReachTesting
import Synchronization
import Testing

/// The reaction rule through a running monitor on the test clock: flip storms against a slow
/// callback, a stuck one, removal during a run, shutdown, and a reaction to both directions.
@Suite("Monitor: the reaction rule")
struct ReactionRuleTests {
    /// `count` flips, each a loss then a restoration; the sequences of the restorations and losses.
    @discardableResult
    private func flip(
        _ harness: MonitorHarness,
        _ count: Int,
        endingConnected: Bool = true
    ) -> (restored: [UInt64], lost: [UInt64]) {
        var restored: [UInt64] = []
        var lost: [UInt64] = []
        for index in 0..<count {
            harness.record(.refused("server"))
            lost.append(harness.sequence)
            if endingConnected || index < count - 1 {
                harness.record(.ok("server"))
                restored.append(harness.sequence)
            }
        }
        return (restored, lost)
    }

    @Test func aSlowCallbackRunsOnceMoreWithTheLatestTransitionAfterAFlipStorm() async throws {
        let harness = MonitorHarness()
        let gate = Gate()
        let overlap = OverlapCounter()
        let log = CallbackLog()
        harness.monitor.onConnectivityRestored(named: "slow") { transition in
            await overlap.during {
                log.append("slow", transition)
                await gate.wait()
            }
        }
        var reports = harness.monitor.callbackReports().makeAsyncIterator()
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        let first = harness.sequence
        try await waitUntil("the first run started") { gate.arrivals == 1 }

        let storm = flip(harness, 100)
        gate.open()
        let firstReport = try #require(await reports.next())
        #expect(firstReport.sequence == first)
        #expect(firstReport.coalesced == 0)
        let followUp = try #require(await reports.next())
        #expect(followUp.outcome == .succeeded)
        #expect(followUp.sequence == storm.restored.last, "the follow-up ran with the latest transition")
        #expect(
            followUp.coalesced == storm.restored.count - 1,
            "the other restorations are counted as coalesced into it"
        )
        #expect(log.sequences(of: "slow") == [first, harness.sequence], "two runs for 101 restorations: no pile-up")
        #expect(overlap.maximum == 1, "never two runs at once")
        await harness.stop()
        #expect(await reports.next() == nil, "nothing else ran or was reported")
    }

    @Test func whenTheStormEndsTheOtherWayNothingRunsAndTheSkipIsReported() async throws {
        let logs = CapturedLogs()
        let harness = MonitorHarness(logger: logs.logger)
        let gate = Gate()
        let log = CallbackLog()
        harness.monitor.onConnectivityRestored(named: "slow") { transition in
            log.append("slow", transition)
            await gate.wait()
        }
        var reports = harness.monitor.callbackReports().makeAsyncIterator()
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        try await waitUntil("the first run started") { gate.arrivals == 1 }

        let storm = flip(harness, 50, endingConnected: false)
        #expect(harness.state == .disconnected)
        gate.open()
        #expect(await reports.next()?.outcome == .succeeded)
        let skipped = try #require(await reports.next())
        #expect(skipped.outcome == .skipped)
        #expect(skipped.coalesced == storm.restored.count)
        #expect(skipped.sequence == storm.restored.last)
        #expect(log.count == 1, "nothing ran for restorations that connectivity undid")
        try await waitUntil("the skip is logged") {
            logs.warnings.contains {
                $0.metadata["outcome"] == "skipped" && $0.metadata["coalesced"] == "\(storm.restored.count)"
            }
        }
        await harness.stop()
    }

    @Test func aCallbackIgnoringCancellationKeepsItsReactionBusyInsteadOfPilingUpTasks() async throws {
        let logs = CapturedLogs()
        let harness = MonitorHarness(logger: logs.logger)
        let gate = Gate()
        let log = CallbackLog()
        harness.monitor.onConnectivityRestored(named: "stuck", timeout: .seconds(30)) { transition in
            log.append("stuck", transition)
            await gate.wait()  // ignores cancellation
        }
        var reports = harness.monitor.callbackReports().makeAsyncIterator()
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        try await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(30))
        let timedOut = try #require(await reports.next())
        #expect(timedOut.outcome == .timedOut)
        #expect(timedOut.duration == .seconds(30))

        let storm = flip(harness, 20)
        #expect(harness.clock.sleeperCount == 0, "no new run, so no new deadline, while the stuck one runs")
        #expect(gate.arrivals == 1, "the stuck body still holds its only run")
        try await waitUntil("one warning that transitions wait") {
            logs.warnings.filter { $0.message.contains("still running past its timeout") }.count == 1
        }
        #expect(
            logs.warnings.filter { $0.message.contains("still running past its timeout") }.count == 1,
            "one warning per run, not per transition"
        )

        gate.open()
        let followUp = try #require(await reports.next())
        #expect(followUp.outcome == .succeeded)
        #expect(followUp.sequence == storm.restored.last)
        #expect(followUp.coalesced == storm.restored.count - 1)
        #expect(log.count == 2)
        #expect(logs.contains("past its timeout: it takes transitions again"))
        await harness.stop()
    }

    @Test func aCallbackRemovedDuringItsRunDoesNotRunAgainAndTheSkipIsReported() async throws {
        let harness = MonitorHarness()
        let gate = Gate()
        let log = CallbackLog()
        let id = harness.monitor.onConnectivityRestored(named: "removed") { transition in
            log.append("removed", transition)
            await gate.wait()
        }
        var reports = harness.monitor.callbackReports().makeAsyncIterator()
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        try await waitUntil("the run started") { gate.arrivals == 1 }
        let storm = flip(harness, 3)
        #expect(harness.monitor.removeCallback(id))
        #expect(!harness.monitor.removeCallback(id))
        gate.open()
        #expect(await reports.next()?.outcome == .succeeded)
        let skipped = try #require(await reports.next())
        #expect(skipped.outcome == .skipped)
        #expect(skipped.coalesced == storm.restored.count)
        flip(harness, 1)
        await harness.stop()
        #expect(await reports.next() == nil)
        #expect(log.count == 1)
    }

    @Test func atShutdownTheRunIsCancelledAndWhatWaitedIsReportedSkipped() async throws {
        let harness = MonitorHarness()
        let gate = Gate()
        harness.monitor.onConnectivityRestored(named: "slow") { _ in await gate.wait() }
        var reports = harness.monitor.callbackReports().makeAsyncIterator()
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        try await waitUntil("the run started") { gate.arrivals == 1 }
        let storm = flip(harness, 2)
        await harness.stop()
        #expect(await reports.next()?.outcome == .cancelled)
        let skipped = try #require(await reports.next())
        #expect(skipped.outcome == .skipped)
        #expect(skipped.coalesced == storm.restored.count)
        #expect(await reports.next() == nil)
        gate.open()
    }

    @Test func aReactionToBothDirectionsEndsAtTheLatestStateInOrder() async throws {
        let harness = MonitorHarness()
        let gate = Gate()
        let seen = Mutex<[ConnectivityTransition]>([])
        let overlap = OverlapCounter()
        harness.monitor.addReaction(named: "webhook-like", on: [.restored, .lost], timeout: nil) { transition in
            await overlap.during {
                seen.withLock { $0.append(transition) }
                await gate.wait()
            }
        }
        var reports = harness.monitor.callbackReports().makeAsyncIterator()
        harness.record(.ok("server"))  // leaving unknown is not a transition
        harness.record(.refused("server"))
        let first = harness.sequence
        try await waitUntil("the run started") { gate.arrivals == 1 }
        var transitions = 0
        for _ in 0..<10 {
            harness.record(.ok("server"))
            harness.record(.refused("server"))
            transitions += 2
        }
        gate.open()
        #expect(await reports.next()?.sequence == first)
        let followUp = try #require(await reports.next())
        #expect(followUp.direction == .lost)
        #expect(followUp.sequence == harness.sequence)
        #expect(followUp.coalesced == transitions - 1)
        #expect(seen.withLock { $0.map(\.sequence) } == [first, harness.sequence])
        #expect(overlap.maximum == 1)
        await harness.stop()
    }
}
