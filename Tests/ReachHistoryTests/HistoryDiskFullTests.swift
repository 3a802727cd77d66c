import Foundation
import ReachAPI
import ReachConfig
import ReachCore
import ReachHistory
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

/// The recorder with its file on a tmpfs of 1 MiB that the test fills: commits fail with the
/// disk-full error, what waits stays within the recorder's bound (minutes dropped before
/// transitions), and once space is freed the next commit writes it; nothing committed before is lost.
@Suite("History store: a full disk", .enabled(if: TinyFileSystem.isAvailable, "needs root to mount a tmpfs"))
struct HistoryDiskFullTests {
    private let start: Int64 = 1_800_000_000

    private func verdict(_ state: ConnectivityState, at time: WallTime) -> Verdict {
        state == .connected
            ? Verdict(state: .connected, reason: .healthy, since: time)
            : Verdict(
                state: .disconnected,
                reason: .targetFailed(target: "api", reason: .timeout),
                since: time,
                fault: .upstream
            )
    }

    @Test func writesFailWhileFullKeepABoundedBacklogAndResumeWhenSpaceIsFreed() async throws {
        let disk = try await TinyFileSystem(size: "1m")
        let path = disk.path + "/history.sqlite"
        let clock = ManualWallClock(start)
        let logs = CapturedLogs()
        let bound = 120
        let recorder = try await HistoryRecorder(
            store: try HistoryStore.open(path: path, createDirectory: false).store,
            settings: HistorySettings(),
            clock: clock.read,
            logger: logs.logger,
            maximumPending: bound
        )
        recorder.record(verdict(.connected, at: clock.now))
        try await recorder.flush()
        #expect(try rowCount("transition", in: path) == 1)

        try disk.fill()
        // Ten minutes of 30 targets and an outage every minute, none of it writable: 300 minute rows and 20 transitions.
        var failures: [HistoryWriteFailure] = []
        for _ in 0..<10 {
            recorder.record(verdict(.disconnected, at: clock.now))
            for target in 0..<30 { recorder.record(ProbeResult.success("target-\(target)", latency: .milliseconds(2))) }
            clock.advance(by: .seconds(30))
            recorder.record(verdict(.connected, at: clock.now))
            clock.advance(by: .seconds(30))
            do {
                try await recorder.flush()
            } catch {
                failures.append(error)
            }
            #expect(recorder.pendingRows <= bound, "\(recorder.pendingRows) rows wait")
        }
        #expect(failures.count == 10, "every commit fails while the disk is full")
        #expect(failures.allSatisfy { $0.isDiskFull }, "\(failures)")
        #expect(failures.first?.description.contains("the file system holding \(path) is full") == true, "\(failures)")
        #expect(recorder.pendingRows == bound, "the backlog is held at its bound")
        #expect(
            logs.warnings.filter { $0.message.contains("rows wait for the file to be writable") }.count == 1,
            "said once: \(logs.all)"
        )
        #expect(try rowCount("transition", in: path) == 1, "the committed transition is still there")

        try disk.free()
        try await recorder.flush()
        #expect(recorder.pendingRows == 0)
        #expect(try rowCount("transition", in: path) == 21, "every transition, the ones made while full too")
        #expect(try rowCount("minute", in: path) == bound - 20, "the newest minutes, up to the bound")
        #expect(logs.contains("rows were dropped while the file could not be written"))
        let document = try await recorder.document(
            HistoryQuery(window: WallTime(sinceEpoch: .seconds(start))..<clock.now)
        )
        #expect(document.outages.count == 10)
        recorder.store.close()
        await disk.unmount()
    }
}
