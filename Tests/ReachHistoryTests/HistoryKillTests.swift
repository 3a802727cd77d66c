import Foundation
import ReachHistory
import ReachTestRigs
import ReachTesting
import Testing

/// The helper that writes history as fast as it can, built next to the test bundle.
private let writerHelper = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().appending(
    path: "history-writer-helper"
)

@Suite("History store: SIGKILL mid-write", .serialized)
struct HistoryKillTests {
    /// The helper commits batches of 20,000 transitions and says `begin N` before each commit and
    /// `committed N TOTAL` after it; it is killed once it is past batch 3. When its last word was
    /// `begin`, the kill landed inside a write (on a loaded machine it can land between two, so a
    /// round tries up to ten times for one that does). Every time: every batch it reported committed
    /// is in the file, the batch in flight is there whole or not at all, and the file opens cleanly
    /// (SQLite's quick check passes: it is not moved aside).
    @Test(arguments: 1...3)
    func aKillMidWriteLosesNoCommittedTransition(round: Int) async throws {
        let batchSize = 20_000
        var landedInsideAWrite = false
        for _ in 1...10 where !landedInsideAWrite {
            let directory = try TemporaryDirectory("history-kill")
            let path = directory.path + "/history.sqlite"
            let helper = try ChildProcess(
                "history-writer",
                executable: writerHelper.path,
                arguments: [path, "\(batchSize)"]
            )
            try await helper.waitForLine(timeout: .seconds(60)) { $0 == "begin \(2 + round)" }
            helper.signal(SIGKILL)
            await helper.waitForExit()
            let output = helper.output
            landedInsideAWrite = output.last?.hasPrefix("begin ") == true
            let committed =
                output.compactMap { line -> Int? in
                    let words = line.split(separator: " ")
                    return words.first == "committed" ? Int(words[2]) : nil
                }.max() ?? 0

            let opening = try HistoryStore.open(path: path, createDirectory: false)
            #expect(opening.movedAside == nil, "the file opens cleanly after the kill")
            opening.store.close()
            let rows = try rowCount("transition", in: path)
            #expect(
                rows == committed || rows == committed + batchSize,
                "\(rows) rows, \(committed) reported committed: the batch in flight is whole or absent"
            )
        }
        #expect(landedInsideAWrite, "no kill in ten landed between a batch's begin and its commit")
    }
}
