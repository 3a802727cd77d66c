import Logging
import ReachCore
import ReachSupport
import ReachTesting
import Synchronization
import Testing

/// Collects what callbacks saw, from any task.
final class CallbackLog: Sendable {
    private let entries = Mutex<[(name: String, sequence: UInt64, direction: TransitionDirection)]>([])

    func append(_ name: String, _ transition: ConnectivityTransition) {
        entries.withLock { $0.append((name, transition.sequence, transition.direction)) }
    }

    var count: Int { entries.withLock { $0.count } }
    func sequences(of name: String) -> [UInt64] { entries.withLock { $0.filter { $0.name == name }.map(\.sequence) } }
    func directions(of name: String) -> Set<TransitionDirection> {
        entries.withLock { Set($0.filter { $0.name == name }.map(\.direction)) }
    }
}

@Suite("Monitor: verdicts over time")
struct MonitorTimingTests {
    @Test func isLikelyConnectedTrustsAConnectedVerdictForFiveSecondsAfterTheLastResult() async {
        let harness = MonitorHarness()
        #expect(!harness.monitor.isLikelyConnected, "no evidence yet")
        harness.record(.ok("server"))
        #expect(harness.monitor.isLikelyConnected)
        harness.clock.advance(by: .seconds(5))
        #expect(harness.monitor.isLikelyConnected, "5 s after the evidence it is still trusted")
        harness.clock.advance(by: .milliseconds(1))
        #expect(!harness.monitor.isLikelyConnected, "past 5 s it is not")
        #expect(harness.state == .connected, "the verdict itself stands")
        harness.record(.ok("server"))
        #expect(harness.monitor.isLikelyConnected, "fresh evidence restores trust")
        harness.record(.refused("server"))
        #expect(!harness.monitor.isLikelyConnected)
        await harness.stop()
    }

    /// With `probe.interval: 30s`, a fixed 5 s window said "not likely connected" for most of
    /// every interval of a machine that was connected throughout.
    @Test func isLikelyConnectedLastsUntilTheNextResultIsDueWhenTargetsAreProbedLessOften() async {
        var server = ProbeTarget.http("server")
        server.interval = .seconds(30)
        let harness = MonitorHarness(targets: [server])
        harness.connect()
        // The next result is due at the latest the interval, the scheduler's 0.5 s and the 2 s timeout later.
        harness.clock.advance(by: .milliseconds(32_500))
        #expect(harness.monitor.isLikelyConnected, "between two probes of a connected machine")
        harness.clock.advance(by: .milliseconds(1))
        #expect(!harness.monitor.isLikelyConnected, "a result overdue is no evidence")
        harness.record(.ok("server"))
        #expect(harness.monitor.isLikelyConnected)

        // Probed every second again after a reload: 5 s at the least, as before.
        server.interval = .seconds(1)
        harness.monitor.reconfigure(ConnectivityMonitor.Configuration(targets: [server]))
        harness.record(.ok("server"))
        harness.clock.advance(by: .seconds(5))
        #expect(harness.monitor.isLikelyConnected)
        harness.clock.advance(by: .milliseconds(1))
        #expect(!harness.monitor.isLikelyConnected)
        await harness.stop()
    }

    @Test func theLogReportsVerdictChangesAndKeepsATargetsOwnChangesForDebug() async {
        let logs = CapturedLogs()
        let harness = MonitorHarness(targets: [.http("a"), .http("b")], logger: logs.logger) { $0.policy = .any }
        harness.monitor.update(links: .of(.usable()))
        harness.record(.ok("a"))
        harness.record(.ok("b"))  // still connected: only b's own status changed
        harness.record(.refused("b"))  // still connected through a
        let verdictLines = logs.all.filter { $0.metadata["state"] != nil }
        #expect(verdictLines.map(\.level) == [.info, .notice, .debug, .debug])
        #expect(
            verdictLines.map(\.message) == [
                "unknown: awaiting_probe", "connected: healthy", "connected: healthy", "connected: healthy",
            ]
        )
        await harness.stop()
    }

    @Test func losingTheLinkIsPublishedAtOnceWithoutTheClockMoving() async throws {
        let harness = MonitorHarness()
        harness.monitor.update(links: .of(.usable()))
        harness.record(.ok("server"))
        var events = harness.monitor.subscribe().makeAsyncIterator()
        #expect(await events.next()?.verdict.state == .connected)
        harness.monitor.update(links: .of(InterfaceFacts.usable().withoutCarrier))
        let lost = await events.next()
        #expect(lost?.verdict.state == .disconnected)
        #expect(lost?.verdict.reason == .noLink)
        #expect(harness.clock.now.offset == .zero)
        await harness.stop()
    }

    @Test func gainsWaitOutTheSettleWindowThenAskForAProbe() async throws {
        let harness = MonitorHarness()
        harness.monitor.update(links: .offline)
        #expect(harness.reason == .noLink)
        var control = harness.monitor.probeControl().makeAsyncIterator()
        #expect(await control.next() == ProbeControl(suspension: .noUsableLink, immediateProbeRequests: 0))

        harness.monitor.update(links: .of(.usable()))
        try await harness.clock.waitForSleepers()
        harness.clock.advance(by: .milliseconds(99))
        #expect(harness.reason == .noLink, "still settling")
        harness.monitor.update(links: .of(.usable(), .usable("wlan0", index: 3)))
        harness.clock.advance(by: .milliseconds(1))
        try await waitUntil("the gain applied") { harness.reason == .awaitingProbe }
        #expect(
            harness.monitor.current.verdict.usableInterfaces == ["eth0", "wlan0"],
            "the latest snapshot of the window wins"
        )
        #expect(
            await control.next() == ProbeControl(suspension: nil, immediateProbeRequests: 1),
            "one probe request for the whole burst"
        )
        await harness.stop()
    }

    @Test func aLossDuringTheSettleWindowCancelsThePendingGain() async throws {
        let harness = MonitorHarness()
        harness.monitor.update(links: .of(.usable()))
        harness.record(.ok("server"))
        harness.monitor.update(links: .of(.usable(), .usable("wlan0", index: 3)))
        try await harness.clock.waitForSleepers()
        harness.monitor.update(links: .offline)
        #expect(harness.reason == .noLink)
        harness.clock.advance(by: .milliseconds(100))
        try await waitUntil("the settle window ended") { harness.clock.sleeperCount == 0 }
        #expect(harness.reason == .noLink, "the stale gain must not come back")
        await harness.stop()
    }

    @Test func aZeroSettleWindowAppliesGainsAtOnce() async {
        let harness = MonitorHarness { $0.linkSettleWindow = .zero }
        harness.monitor.update(links: .offline)
        harness.monitor.update(links: .of(.usable()))
        #expect(harness.reason == .awaitingProbe)
        await harness.stop()
    }

    @Test func aProbeInFlightAcrossALinkLossCannotRestoreConnectivity() async {
        let harness = MonitorHarness { $0.linkSettleWindow = .zero }
        harness.monitor.update(links: .of(.usable()))
        harness.record(.ok("server"))
        let inFlight = harness.monitor.probeEpoch
        harness.monitor.update(links: .offline)
        harness.monitor.update(links: .of(.usable()))
        harness.monitor.record(.ok("server"), epoch: inFlight)
        #expect(harness.state == .disconnected)
        #expect(harness.reason == .awaitingProbe)
        await harness.stop()
    }

    @Test func stoppingEndsEverySubscription() async {
        let harness = MonitorHarness()
        let events = harness.monitor.subscribe()
        let control = harness.monitor.probeControl()
        await harness.stop()
        #expect(await Array(events).count == 1)
        #expect(await Array(control).count == 1)
        #expect(harness.monitor.subscriberCount == 0)
    }
}

@Suite("Monitor: restoration callbacks")
struct MonitorCallbackTests {
    @Test func eachCallbackRunsOncePerTransitionOfItsDirection() async throws {
        let harness = MonitorHarness()
        let log = CallbackLog()
        harness.monitor.onConnectivityRestored(named: "warm-cache") { log.append("warm-cache", $0) }
        harness.monitor.onConnectivityLost(named: "pause-queue") { log.append("pause-queue", $0) }
        var reports = harness.monitor.callbackReports().makeAsyncIterator()

        harness.record(.ok("server"))
        harness.record(.refused("server"))
        let lost = try #require(await reports.next())
        #expect(lost.name == "pause-queue")
        #expect(lost.outcome == .succeeded)
        #expect(lost.direction == .lost)
        harness.record(.ok("server"))
        let restored = try #require(await reports.next())
        #expect(restored.name == "warm-cache")
        #expect(log.sequences(of: "warm-cache") == [restored.sequence])
        #expect(log.sequences(of: "pause-queue") == [lost.sequence])
        await harness.stop()
    }

    @Test func underAThousandFlapsEveryTransitionIsRunCoalescedOrSkippedAndRunsNeverOverlap() async throws {
        let logs = CapturedLogs()
        let harness = MonitorHarness(logger: logs.logger)
        let log = CallbackLog()
        let names = ["restored-1", "restored-2", "lost-1", "lost-2"]
        let overlaps = names.map { _ in OverlapCounter() }
        for (name, overlap) in zip(names, overlaps) {
            let body: @Sendable (ConnectivityTransition) async throws -> Void = { transition in
                await overlap.during {
                    log.append(name, transition)
                    await Task.yield()
                }
            }
            if name.hasPrefix("restored") {
                harness.monitor.onConnectivityRestored(named: name, body)
            } else {
                harness.monitor.onConnectivityLost(named: name, body)
            }
        }
        // Every report is logged, and a log handler, unlike a lagging subscriber, misses none.
        func accounted(_ name: String) -> Int {
            logs.all.filter { $0.metadata["callback"] == "\(name)" && $0.metadata["outcome"] != nil }.reduce(0) {
                total,
                line in
                total + (line.metadata["outcome"] == "skipped" ? 0 : 1)
                    + (Int("\(line.metadata["coalesced"] ?? "0")") ?? 0)
            }
        }
        harness.record(.ok("server"))
        let flaps = 1_000
        var lastLost: UInt64 = 0
        for _ in 0..<flaps {
            harness.record(.refused("server"))
            lastLost = harness.sequence
            harness.record(.ok("server"))
        }
        try await waitUntil("every transition accounted for", timeout: .seconds(60)) {
            names.allSatisfy { accounted($0) == flaps }
        }
        for (name, overlap) in zip(names, overlaps) {
            let sequences = log.sequences(of: name)
            #expect(
                sequences == sequences.sorted() && Set(sequences).count == sequences.count,
                "\(name) ran in order, once per run"
            )
            #expect(overlap.maximum == 1, "\(name) ran twice at once")
        }
        #expect(log.sequences(of: "restored-1").last == harness.sequence, "the last restoration always runs")
        #expect(log.directions(of: "restored-1") == [.restored])
        #expect(log.directions(of: "lost-1") == [.lost])
        #expect(log.sequences(of: "lost-1").allSatisfy { $0 <= lastLost })
        await harness.stop()
    }

    @Test func aHangingCallbackTimesOutWithoutDelayingOthersOrTheNextTransition() async throws {
        let harness = MonitorHarness()
        let log = CallbackLog()
        // Hangs and ignores cancellation: the worst a callback can do.
        harness.monitor.onConnectivityRestored(named: "hangs", timeout: .seconds(30)) { _ in
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
        }
        harness.monitor.onConnectivityRestored(named: "quick") { log.append("quick", $0) }
        harness.monitor.onConnectivityLost(named: "lost") { log.append("lost", $0) }
        var reports = harness.monitor.callbackReports().makeAsyncIterator()

        harness.record(.refused("server"))
        harness.record(.ok("server"))
        let quick = try #require(await reports.next())
        #expect(quick.name == "quick")
        #expect(quick.outcome == .succeeded)

        harness.record(.refused("server"))
        let lost = try #require(await reports.next())
        #expect(lost.name == "lost", "the next transition's callbacks ran while the hanging one still hangs")

        try await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(29))
        harness.clock.advance(by: .seconds(1))
        let hung = try #require(await reports.next())
        #expect(hung.name == "hangs")
        #expect(hung.outcome == .timedOut)
        #expect(hung.duration == .seconds(30))
        await harness.stop()
    }

    @Test func aThrowingCallbackIsReportedAsFailed() async throws {
        struct CacheUnavailable: Error, CustomStringConvertible { var description: String { "cache unavailable" } }
        let harness = MonitorHarness()
        harness.monitor.onConnectivityRestored(named: "warm-cache") { _ in throw CacheUnavailable() }
        var reports = harness.monitor.callbackReports().makeAsyncIterator()
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        #expect(await reports.next()?.outcome == .failed("cache unavailable"))
        await harness.stop()
    }

    @Test func aRemovedCallbackNoLongerRuns() async throws {
        let harness = MonitorHarness()
        let log = CallbackLog()
        let removed = harness.monitor.onConnectivityRestored(named: "removed") { log.append("removed", $0) }
        harness.monitor.onConnectivityRestored(named: "kept") { log.append("kept", $0) }
        #expect(harness.monitor.removeCallback(removed))
        #expect(!harness.monitor.removeCallback(removed))
        var reports = harness.monitor.callbackReports().makeAsyncIterator()
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        #expect(await reports.next()?.name == "kept")
        #expect(log.sequences(of: "removed").isEmpty)
        await harness.stop()
    }

    @Test func aRunningCallbackIsCancelledAtShutdown() async throws {
        let harness = MonitorHarness()
        // A callback that hangs on purpose, until shutdown cancels it.
        harness.monitor.onConnectivityRestored(named: "slow") { _ in try await Task.sleep(for: .seconds(3600)) }
        var reports = harness.monitor.callbackReports().makeAsyncIterator()
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        try await harness.clock.waitForSleepers()
        await harness.stop()
        let report = await reports.next()
        #expect(report?.name == "slow")
        #expect(report?.outcome == .cancelled)
        #expect(await reports.next() == nil, "the report stream ends with the monitor")
    }
}
