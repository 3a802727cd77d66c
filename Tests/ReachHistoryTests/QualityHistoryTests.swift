import Logging
import ReachAPI
import ReachConfig
import ReachCore
import ReachHistory
import ReachSupport
import ReachTesting
import Testing

/// History keeps the verdict's impaired spells beside its outages: `/v1/history`'s `impaired`,
/// which `reachctl history` lists.
@Suite("History store: impaired spells")
struct QualityHistoryTests {
    private let start: Int64 = 1_800_000_000

    private func connected(_ quality: VerdictQuality?, since: WallTime) -> Verdict {
        var verdict = Verdict(state: .connected, reason: .healthy, since: since)
        verdict.quality = quality
        return verdict
    }

    @Test func anImpairedSpellIsKeptWithWhereAndHowAndDoesNotCountAgainstUptime() async throws {
        let directory = try TemporaryDirectory("history")
        let clock = ManualWallClock(start)
        let recorder = try await HistoryRecorder(
            store: try HistoryStore.open(path: directory.path + "/history.sqlite", createDirectory: false).store,
            settings: HistorySettings(),
            clock: clock.read,
            logger: Logger(label: "test")
        )
        let since = clock.now
        recorder.record(connected(nil, since: since))
        clock.advance(by: .seconds(30))
        recorder.record(connected(VerdictQuality(state: .good, since: clock.now), since: since))
        clock.advance(by: .seconds(60))
        let impaired = VerdictQuality(
            state: .impaired,
            fault: .gateway,
            target: "router",
            exceeded: [
                QualityFinding(measure: .loss, value: 0.2, budget: 0.05),
                QualityFinding(measure: .latency, value: 0.4, budget: 0.3),
            ],
            since: clock.now
        )
        let impairedAt = clock.now
        recorder.record(connected(impaired, since: since))
        clock.advance(by: .seconds(5))
        var louder = impaired
        louder.exceeded[1].value = 0.9
        recorder.record(connected(louder, since: since))
        clock.advance(by: .seconds(40))
        recorder.record(connected(VerdictQuality(state: .good, since: clock.now), since: since))
        clock.advance(by: .seconds(10))
        var again = impaired
        again.since = clock.now
        recorder.record(connected(again, since: since))
        clock.advance(by: .seconds(5))
        try await recorder.flush()

        let document = try await recorder.document(
            HistoryQuery(window: WallTime(sinceEpoch: .seconds(start))..<clock.now)
        )
        #expect(document.outages.isEmpty)
        #expect(document.uptime.connectedSeconds == 150, "impaired is connected")
        #expect(document.impaired.count == 2)
        let first = try #require(document.impaired.first)
        #expect(first.start == RFC3339.string(from: impairedAt))
        #expect(first.durationSeconds == 45, "a new value within the spell is not a new spell")
        #expect((first.reason, first.fault, first.target) == ("latency,loss", "gateway", "router"))
        #expect(document.impaired.last?.end == nil, "the second lasts")
        #expect(document.transitions.map(\.state) == ["connected"], "the verdict's transitions are its own")

        let target = try await recorder.document(
            HistoryQuery(window: WallTime(sinceEpoch: .seconds(start))..<clock.now, target: "router")
        )
        #expect(target.impaired.isEmpty, "a target's history has no verdict quality")
    }
}
