import Foundation
import ReachHistory
import ReachTesting
import Testing

/// The helper that writes history as fast as it can, built next to the test bundle.
private let writerHelper = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "history-writer-helper")

@Suite("History store: SIGKILL mid-write", .serialized)
struct HistoryKillTests {
    /// The helper commits batches of 20,000 transitions; it is killed right after it announces a
    /// batch and before it reports that batch committed, i.e. inside the write. Every batch it
    /// reported committed is in the file, the batch it was writing is there whole or not at all,
    /// and the file opens cleanly (SQLite's quick check passes: it is not moved aside).
    @Test(arguments: 1...3)
    func aKillMidWriteLosesNoCommittedTransition(round: Int) async throws {
        let directory = try TemporaryDirectory("history-kill")
        let path = directory.path + "/history.sqlite"
        let batchSize = 20_000
        let helper = try ChildProcess("history-writer", executable: writerHelper.path, arguments: [path, "\(batchSize)"])
        // Let a few batches commit, then kill on the announcement of the next: while it is written.
        let batch = 3 + round
        try await helper.waitForLine(timeout: .seconds(60)) { $0 == "begin \(batch)" }
        helper.signal(SIGKILL)
        await helper.waitForExit()
        let output = helper.output
        #expect(!output.contains { $0.hasPrefix("committed \(batch) ") }, "the kill landed inside the write of batch \(batch): \(output)")
        let committed = output.compactMap { line -> Int? in
            let words = line.split(separator: " ")
            return words.first == "committed" ? Int(words[2]) : nil
        }.max() ?? 0
        #expect(committed == (batch - 1) * batchSize)

        let opening = try HistoryStore.open(path: path, createDirectory: false)
        #expect(opening.movedAside == nil, "the file opens cleanly after the kill")
        opening.store.close()
        let rows = try rowCount("transition", in: path)
        #expect(rows >= committed, "\(rows) rows, \(committed) reported committed")
        #expect(rows == committed || rows == committed + batchSize, "the batch being written is there whole or not at all: \(rows) rows")
    }
}
