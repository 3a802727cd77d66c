import Foundation
import GRDB
import Logging
import ReachAPI
import ReachConfig
import ReachCore
import ReachHistory
import ReachSupport
import ReachTesting
import Synchronization
import Testing

/// A wall clock the test moves.
final class ManualWallClock: Sendable {
    private let time: Mutex<WallTime>

    init(_ seconds: Int64) {
        time = Mutex(WallTime(sinceEpoch: .seconds(seconds)))
    }

    var now: WallTime { time.withLock { $0 } }

    func advance(by duration: Duration) {
        time.withLock { $0 = $0.advanced(by: duration) }
    }

    var read: @Sendable () -> WallTime { { self.now } }
}

/// Counts rows of `table` in the file at `path`, through a connection of the test's own.
func rowCount(_ table: String, in path: String) throws -> Int {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0 }
}

@Suite("History store: real SQLite files")
struct HistoryStoreTests {
    private let logger = Logger(label: "test")
    private let start: Int64 = 1_800_000_000

    private func disconnected(at time: WallTime) -> Verdict {
        Verdict(
            state: .disconnected,
            reason: .targetFailed(target: "api", reason: .connectionRefused),
            since: time,
            fault: .server
        )
    }

    private func connected(at time: WallTime) -> Verdict {
        Verdict(state: .connected, reason: .healthy, since: time)
    }

    @Test func anOutageIsRecordedAndTheTimeBetweenRunsIsUnknown() async throws {
        let directory = try TemporaryDirectory("history")
        let path = directory.path + "/history.sqlite"
        let clock = ManualWallClock(start)
        let first = try await HistoryRecorder(
            store: try HistoryStore.open(path: path, createDirectory: false).store,
            settings: HistorySettings(),
            clock: clock.read,
            logger: logger
        )
        first.record(connected(at: clock.now))
        clock.advance(by: .seconds(100))
        first.record(disconnected(at: clock.now))
        clock.advance(by: .seconds(20))
        first.record(connected(at: clock.now))
        clock.advance(by: .seconds(80))
        try await first.flush()
        first.store.close()
        // reachd is away for 100 s, then runs again for 100 s.
        clock.advance(by: .seconds(100))
        let second = try await HistoryRecorder(
            store: try HistoryStore.open(path: path, createDirectory: false).store,
            settings: HistorySettings(),
            clock: clock.read,
            logger: logger
        )
        second.record(connected(at: clock.now))
        clock.advance(by: .seconds(100))
        try await second.flush()

        let window = WallTime(sinceEpoch: .seconds(start))..<clock.now
        let document = try await second.document(HistoryQuery(window: window))
        #expect(document.outages.count == 1)
        let outage = try #require(document.outages.first)
        #expect(outage.start == RFC3339.string(from: WallTime(sinceEpoch: .seconds(start + 100))))
        #expect(outage.durationSeconds == 20)
        #expect((outage.reason, outage.fault, outage.target) == ("connection_refused", "server", "api"))
        #expect(
            document.gaps == [
                HistoryDocument.Gap(
                    start: RFC3339.string(from: WallTime(sinceEpoch: .seconds(start + 200))),
                    end: RFC3339.string(from: WallTime(sinceEpoch: .seconds(start + 300)))
                )
            ]
        )
        #expect(document.uptime.disconnectedSeconds == 20)
        #expect(document.uptime.unknownSeconds == 100)
        #expect(document.uptime.connectedSeconds == 280)
        #expect(document.transitions.map(\.state) == ["connected", "disconnected", "connected", "connected"])
    }

    /// A server killed with a probe in flight: reset for a moment, refused while it stays down,
    /// then a timeout for longer still. One outage, reported as what held longest; the transitions
    /// keep every change.
    @Test func anOutageWhoseReasonChangesIsOneOutageReportedAsTheReasonThatHeldLongest() async throws {
        let directory = try TemporaryDirectory("history")
        let path = directory.path + "/history.sqlite"
        let clock = ManualWallClock(start)
        let recorder = try await HistoryRecorder(
            store: try HistoryStore.open(path: path, createDirectory: false).store,
            settings: HistorySettings(),
            clock: clock.read,
            logger: logger
        )
        func failing(_ reason: FailureReason, fault: Fault = .server) -> Verdict {
            Verdict(
                state: .disconnected,
                reason: .targetFailed(target: "api", reason: reason),
                since: WallTime(sinceEpoch: .seconds(start + 10)),
                fault: fault
            )
        }
        recorder.record(connected(at: clock.now))
        clock.advance(by: .seconds(10))
        recorder.record(failing(.connectionReset))
        clock.advance(by: .milliseconds(100))
        recorder.record(failing(.connectionRefused))
        clock.advance(by: .seconds(30))
        recorder.record(failing(.timeout, fault: .gateway))
        clock.advance(by: .seconds(20))
        try await recorder.flush()
        let window = WallTime(sinceEpoch: .seconds(start))..<clock.now

        let open = try #require(try await recorder.document(HistoryQuery(window: window)).outages.first)
        #expect(open.end == nil)
        #expect((open.reason, open.fault) == ("connection_refused", "server"), "30 s refused, 20 s of timeout so far")

        clock.advance(by: .seconds(11))
        recorder.record(connected(at: clock.now))
        clock.advance(by: .seconds(1))
        try await recorder.flush()
        let document = try await recorder.document(
            HistoryQuery(window: WallTime(sinceEpoch: .seconds(start))..<clock.now)
        )
        #expect(document.outages.count == 1)
        let outage = try #require(document.outages.first)
        #expect(
            (outage.reason, outage.fault, outage.target) == ("timeout", "gateway", "api"),
            "31 s of timeout against 30 s refused"
        )
        #expect(
            document.transitions.compactMap(\.reason) == [
                "healthy", "connection_reset", "connection_refused", "timeout", "healthy",
            ]
        )
    }

    @Test func aCorruptFileIsMovedAsideAndAFreshOneWorks() async throws {
        let directory = try TemporaryDirectory("history")
        let path = directory.path + "/history.sqlite"
        let garbage = Data(repeating: 0x5A, count: 8192)
        try garbage.write(to: URL(filePath: path))
        let opening = try HistoryStore.open(path: path, createDirectory: false)
        let aside = try #require(opening.movedAside)
        #expect(aside.path.hasPrefix(path + ".corrupt-"))
        #expect(try Data(contentsOf: URL(filePath: aside.path)) == garbage, "the corrupt file is kept as it was")
        let clock = ManualWallClock(start)
        let recorder = try await HistoryRecorder(
            store: opening.store,
            settings: HistorySettings(),
            clock: clock.read,
            logger: logger
        )
        recorder.record(disconnected(at: clock.now))
        clock.advance(by: .seconds(5))
        try await recorder.flush()
        let document = try await recorder.document(
            HistoryQuery(window: WallTime(sinceEpoch: .seconds(start))..<clock.now)
        )
        #expect(document.outages.count == 1)
    }

    @Test func retentionDeletesOldRows() async throws {
        let directory = try TemporaryDirectory("history")
        let path = directory.path + "/history.sqlite"
        let clock = ManualWallClock(start)
        let settings = HistorySettings(retention: .seconds(90 * 86_400))
        let recorder = try await HistoryRecorder(
            store: try HistoryStore.open(path: path, createDirectory: false).store,
            settings: settings,
            clock: clock.read,
            logger: logger
        )
        recorder.record(disconnected(at: clock.now))
        recorder.record(ProbeResult.failure("api", .timeout, latency: .milliseconds(500)))
        clock.advance(by: .seconds(60))
        recorder.record(connected(at: clock.now))
        try await recorder.flush()
        #expect(try rowCount("transition", in: path) == 2)
        #expect(try rowCount("minute", in: path) == 1)

        clock.advance(by: .seconds(89 * 86_400))
        recorder.record(disconnected(at: clock.now))
        try await recorder.flush()
        _ = try await recorder.maintain()
        #expect(try rowCount("transition", in: path) == 3, "nothing is past 90 days yet")

        clock.advance(by: .seconds(2 * 86_400))
        _ = try await recorder.maintain()
        #expect(try rowCount("transition", in: path) == 1, "the two transitions of 91 days ago are gone")
        #expect(try rowCount("minute", in: path) == 0)
    }

    @Test func theSizeCapDeletesTheOldestMinutesFirst() async throws {
        let directory = try TemporaryDirectory("history")
        let path = directory.path + "/history.sqlite"
        let clock = ManualWallClock(start)
        let cap = 512 * 1024
        let recorder = try await HistoryRecorder(
            store: try HistoryStore.open(path: path, createDirectory: false).store,
            settings: HistorySettings(maximumSize: cap),
            clock: clock.read,
            logger: logger
        )
        recorder.record(disconnected(at: clock.now))
        // 200 targets for 60 minutes: 12,000 minute rows, well over 512 KiB.
        for _ in 0..<60 {
            for target in 0..<200 {
                recorder.record(ProbeResult.success("target-\(target)", latency: .milliseconds(3)))
            }
            clock.advance(by: .seconds(60))
            try await recorder.flush()
        }
        #expect(try recorder.store.usedBytes() > cap)
        _ = try await recorder.maintain()
        #expect(try recorder.store.usedBytes() <= cap)
        let minutes = try rowCount("minute", in: path)
        #expect(minutes > 0 && minutes < 12_000)
        #expect(try rowCount("transition", in: path) == 1, "transitions go only once the minutes are gone")
        let newest = try await recorder.document(
            HistoryQuery(window: clock.now.advanced(by: .seconds(-120))..<clock.now, target: "target-0")
        )
        #expect(newest.minutes.count == 2, "the newest minutes stay")
    }
}
