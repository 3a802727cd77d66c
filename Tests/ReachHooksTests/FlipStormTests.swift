import Foundation
import Logging
import ReachConfig
import ReachCore
import ReachHooks
import ReachTestRigs
import ReachTesting
import Testing

/// Storms of transitions through a running monitor and the Reactions service: against a slow hook
/// (which itself detects overlapping runs: mkdir is atomic), every restoration is accounted for as
/// run, coalesced or skipped; against a webhook that is retrying, deliveries stay in order and end
/// at the latest state.
@Suite("Reactions: flip storms against a slow hook and a retrying webhook", .serialized)
struct FlipStormTests {
    @Test func aHundredTransitionsInASecondNeverOverlapAndEndAtTheLatestState() async throws {
        let folder = try HookFolder()
        try await folder.script(
            "50-slow",
            """
            mkdir \(folder.path)/lock 2>/dev/null || echo overlap >> \(folder.path)/overlaps
            echo $REACHD_SEQUENCE >> \(folder.path)/runs
            sleep 0.3
            rmdir \(folder.path)/lock
            """
        )
        let logs = CapturedLogs()
        let harness = MonitorHarness(logger: logs.logger)
        let reactions = Reactions(
            monitor: harness.monitor,
            hooks: HookSettings(restoredDirectory: folder.path, lostDirectory: folder.path + "/none"),
            webhooks: [],
            observer: nil,
            logger: logs.logger
        )
        let service = Task { try await reactions.run() }
        try await waitUntil("the reactions are registered") { logs.contains("re-read on each transition") }

        harness.record(.ok("server"))
        var restorations: [UInt64] = []
        let clock = ContinuousClock()
        let started = clock.now
        // Five bursts of ten flips, each thrown at the hook while it runs: the next burst waits for
        // the run that carries the previous burst's latest restoration to start (it then sleeps
        // 0.3 s), so the storm overlaps the hook's runs however fast or slow the machine is.
        for _ in 0..<5 {
            for _ in 0..<10 {
                harness.record(.refused("server"))
                harness.record(.ok("server"))
                restorations.append(harness.sequence)
            }
            let latest = restorations.last
            try await waitUntil("the hook runs with restoration \(latest ?? 0)", timeout: .seconds(30)) {
                folder.lines("runs").compactMap(UInt64.init).last == latest
            }
        }
        let stormLasted = clock.now - started
        let reaction = "hooks \(folder.path)"
        func accounted() -> Int {
            logs.all.filter { $0.metadata["callback"] == "\(reaction)" && $0.metadata["outcome"] != nil }.reduce(0) {
                total,
                line in
                total + (line.metadata["outcome"] == "skipped" ? 0 : 1)
                    + (Int("\(line.metadata["coalesced"] ?? "0")") ?? 0)
            }
        }
        try await waitUntil("every restoration run, coalesced or skipped", timeout: .seconds(30)) {
            accounted() == restorations.count
        }
        let runs = folder.lines("runs").compactMap(UInt64.init)
        #expect(folder.contents("overlaps") == nil, "two runs of the hook overlapped")
        #expect(runs.last == restorations.last, "the last run saw the latest restoration")
        #expect(runs == runs.sorted())
        #expect(
            runs.count < restorations.count / 2,
            "\(runs.count) runs for \(restorations.count) restorations in \(stormLasted): coalesced"
        )
        #expect(
            logs.all.contains { $0.message.contains("standing for") && $0.metadata["callback"] == "\(reaction)" },
            "coalescing is logged"
        )
        service.cancel()
        try await service.value
        await harness.stop()
    }
    @Test func aWebhookRetryingThroughAFlipStormDeliversInOrderAndEndsAtTheLatestState() async throws {
        let receiver = try await WebhookReceiver(["--fail-first", "3"])
        defer { receiver.stop() }
        let logs = CapturedLogs()
        let harness = MonitorHarness(logger: logs.logger)
        let settings = WebhookSettings(
            name: "ops",
            url: receiver.url,
            timeout: .seconds(2),
            giveUpAfter: .seconds(30),
            firstRetryDelay: .milliseconds(150)
        )
        let empty = try HookFolder()
        let reactions = Reactions(
            monitor: harness.monitor,
            hooks: HookSettings(restoredDirectory: empty.path, lostDirectory: empty.path),
            webhooks: [settings],
            observer: nil,
            logger: logs.logger
        )
        let service = Task { try await reactions.run() }
        try await waitUntil("the reactions are registered") { logs.contains("re-read on each transition") }

        harness.record(.ok("server"))
        var transitions = 0
        // Twenty flips in four bursts; each burst after the first waits for one more failed attempt,
        // so the storm runs through the webhook's retries (the receiver fails the first three).
        for burst in 0..<4 {
            try await waitUntil("\(burst) attempt(s) at the webhook", timeout: .seconds(30)) {
                receiver.requests.count >= min(burst, 3)
            }
            for _ in 0..<5 {
                harness.record(.refused("server"))
                harness.record(.ok("server"))
                transitions += 2
            }
        }
        harness.record(.refused("server"))
        transitions += 1
        let last = harness.sequence
        try await waitUntil("the latest state delivered", timeout: .seconds(30)) {
            receiver.requests.contains { $0["status"] as? Int == 204 && $0["sequence"] as? String == "\(last)" }
        }
        let delivered = receiver.requests.filter { $0["status"] as? Int == 204 }.compactMap {
            ($0["sequence"] as? String).flatMap(UInt64.init)
        }
        #expect(delivered == delivered.sorted(), "in order: \(delivered)")
        #expect(delivered.last == last)
        #expect(
            delivered.count < transitions / 2,
            "\(delivered.count) deliveries for \(transitions) transitions: coalesced while retrying"
        )
        #expect(receiver.requests.last?["event"] as? String == "lost")
        service.cancel()
        try await service.value
        await harness.stop()
    }
}

@Suite("Reactions: reconfiguration")
struct ReactionsReconfigurationTests {
    @Test func aReconfigurationTakesEffectAtTheNextTransition() async throws {
        let (before, after) = (try HookFolder(), try HookFolder())
        for folder in [before, after] {
            try await folder.script("10-note", "echo $REACHD_SEQUENCE >> \(folder.path)/runs")
        }
        let logs = CapturedLogs()
        let harness = MonitorHarness(logger: logs.logger)
        let reactions = Reactions(
            monitor: harness.monitor,
            hooks: HookSettings(restoredDirectory: before.path),
            webhooks: [],
            observer: nil,
            logger: logs.logger
        )
        let service = Task { try await reactions.run() }
        try await waitUntil("the reactions are registered") { logs.contains("re-read on each transition") }
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        let first = harness.sequence
        try await waitUntil("the first directory ran") { before.lines("runs") == ["\(first)"] }

        reactions.reconfigure(hooks: HookSettings(restoredDirectory: after.path), webhooks: [])
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        let second = harness.sequence
        try await waitUntil("the new directory ran") { after.lines("runs") == ["\(second)"] }
        reactions.reconfigure(hooks: HookSettings(restoredDirectory: after.path), webhooks: [])
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        let third = harness.sequence
        try await waitUntil("the unchanged registration ran again") {
            after.lines("runs") == ["\(second)", "\(third)"]
        }
        #expect(before.lines("runs") == ["\(first)"], "the old directory is no longer registered")
        #expect(
            logs.all.filter { $0.message.contains("re-read on each transition") }.count == 2,
            "an unchanged configuration registers nothing anew"
        )
        service.cancel()
        try await service.value
        await harness.stop()
    }
}
