import Foundation
import ReachCore
import ReachLogging
import ReachTestRigs
import ReachTesting
import Testing

/// When journald goes away or stops reading, lines go to standard error as logfmt: none is lost
/// and logging never waits for journald.
@Suite("Journal fallback")
struct JournalFallbackTests {
    /// Line numbers found in the journal and on standard error.
    private func delivered(
        _ journal: PrivateJournal,
        identifier: String
    ) async throws -> (journal: [Int], standardError: [Int]) {
        let inJournal = try await journal.entries(["SYSLOG_IDENTIFIER=\(identifier)"]).compactMap {
            $0["REACHD_LINE"].flatMap(Int.init)
        }
        let onStandardError = journal.standardError.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: " line=") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        return (inJournal, onStandardError)
    }

    @Test func linesGoToStandardErrorWhileJournaldIsGoneAndBackAfterwards() async throws {
        let id = "reachd-test-gone-\(UUID().uuidString.prefix(8))"
        let journal = try await PrivateJournal(journalLogHelper, [id, "journald"])
        for line in 1...5 { journal.send("info\tbefore\tline=\(line)") }
        _ = try await journal.waitForEntries(["SYSLOG_IDENTIFIER=\(id)"], count: 5)

        try await journal.stopJournald()
        for line in 6...10 { journal.send("info\twhile gone\tline=\(line)") }
        let errors = try await journal.waitForErrors("line=10")
        #expect(errors.components(separatedBy: "journald does not answer").count == 2, "one notice:\n\(errors)")

        try await journal.restartJournald()
        for line in 11...15 { journal.send("info\tafter\tline=\(line)") }
        journal.closeInput()
        let status = await journal.finish()
        #expect(status == 0, "the helper exited with \(status); its standard error:\n\(journal.standardError)")
        // The helper has handed its last lines over; journald stores them when it reads its socket:
        // lines 1-5 and 11-15, and the notice that it answers again.
        _ = try await journal.waitForEntries(["SYSLOG_IDENTIFIER=\(id)"], count: 11)

        let (inJournal, onStandardError) = try await delivered(journal, identifier: id)
        #expect(Set(inJournal).isSuperset(of: [1, 2, 3, 4, 5, 11, 12, 13, 14, 15]), "\(inJournal)")
        #expect(Set(onStandardError) == Set(6...10), "\(journal.standardError)")
        #expect(Set(inJournal + onStandardError) == Set(1...15), "none lost")
        let back = try await journal.entries(["SYSLOG_IDENTIFIER=\(id)", "PRIORITY=5"]).compactMap { $0["MESSAGE"] }
        #expect(back.contains("journald answers again; 5 lines went to standard error meanwhile"), "\(back)")
    }

    @Test func aStoppedJournaldNeverBlocksLogging() async throws {
        let id = "reachd-test-frozen-\(UUID().uuidString.prefix(8))"
        let journal = try await PrivateJournal(journalLogHelper, [id, "journald"])
        journal.send("info\tbefore\tline=0")
        _ = try await journal.waitForEntries(["SYSLOG_IDENTIFIER=\(id)"], count: 1)

        // A frozen journald reads nothing: its socket queue fills and a plain send would wait.
        kill(journal.journaldPID, SIGSTOP)
        let count = 3000
        let started = ContinuousClock.now
        // From another thread: were logging to block, the helper would stop reading and these
        // writes would block too; the test must still get to SIGCONT and report it.
        Thread.detachNewThread {
            for line in 1...count { journal.send("info\twhile frozen\tline=\(line)") }
        }
        _ = try await journal.waitForOutput("logged \(count + 1)\n", timeout: .seconds(30))
        let elapsed = ContinuousClock.now - started
        print("\(count) lines logged in \(elapsed) with journald stopped")
        #expect(elapsed < .seconds(20), "logging waited for journald: \(elapsed)")
        #expect(journal.standardError.contains("journald is not taking lines"), "one notice says why")

        kill(journal.journaldPID, SIGCONT)
        journal.closeInput()
        #expect(await journal.finish(timeout: .seconds(30)) == 0)
        // journald, thawed, stores what waited in its socket as it reads it.
        try? await waitUntil(
            "every line in the journal or on standard error",
            timeout: .seconds(30),
            every: .milliseconds(100)
        ) {
            let (inJournal, onStandardError) = try await self.delivered(journal, identifier: id)
            return Set(inJournal + onStandardError) == Set(0...count)
        }
        let (inJournal, onStandardError) = try await delivered(journal, identifier: id)
        #expect(
            Set(inJournal + onStandardError) == Set(0...count),
            "none lost: \(inJournal.count) in the journal, \(onStandardError.count) on standard error"
        )
        #expect(!onStandardError.isEmpty && inJournal.count > 1)
    }
}
