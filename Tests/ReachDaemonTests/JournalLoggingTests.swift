import Foundation
import ReachCore
import ReachLogging
import ReachTestRigs
import ReachTesting
import Testing

/// reachd's lines in a real journald (one per test, in its own mount namespace), read back with
/// `journalctl`.
@Suite("Logging to the journal")
struct JournalLoggingTests {
    private func helper(
        _ identifier: String,
        target: String = "journald",
        journald: Bool = true,
        markJournalStream: Bool = false
    ) async throws -> PrivateJournal {
        try await PrivateJournal(
            journalLogHelper,
            [identifier, target],
            journald: journald,
            markJournalStream: markJournalStream
        )
    }

    @Test func fieldsPriorityAndLocationReachTheJournal() async throws {
        let id = "reachd-test-fields-\(UUID().uuidString.prefix(8))"
        let journal = try await helper(id)
        let levels = [
            "trace": "7", "debug": "7", "info": "6", "notice": "5", "warning": "4", "error": "3", "critical": "2",
        ]
        for level in levels.keys.sorted() {
            journal.send(
                "\(level)\tline at \(level)\tstate=disconnected\tprevious_state=connected\treason=timeout\ttarget=server\tinterfaces=eth0,wlan0\tlatency_ms=12.5\tsequence=42\treceiveBuffer=8"
            )
        }
        journal.send("info\tfirst line\\nsecond line")
        journal.closeInput()
        let status = await journal.finish()
        #expect(status == 0, "the helper exited with \(status); its standard error:\n\(journal.standardError)")
        let entries = try await journal.waitForEntries(["SYSLOG_IDENTIFIER=\(id)"], count: levels.count + 1)
        #expect(entries.count == levels.count + 1, "\(entries)")
        for (level, priority) in levels {
            let entry = try #require(entries.first { $0["MESSAGE"] == "line at \(level)" }, "no line at \(level)")
            #expect(entry["PRIORITY"] == priority, "\(level)")
            #expect(entry["REACHD_STATE"] == "disconnected")
            #expect(entry["REACHD_PREVIOUS_STATE"] == "connected")
            #expect(entry["REACHD_REASON"] == "timeout")
            #expect(entry["REACHD_TARGET"] == "server")
            #expect(entry["REACHD_INTERFACES"] == "eth0,wlan0")
            #expect(entry["REACHD_LATENCY_MS"] == "12.5")
            #expect(entry["REACHD_SEQUENCE"] == "42")
            #expect(entry["REACHD_RECEIVE_BUFFER"] == "8")
            #expect(entry["CODE_FILE"] == "journal_log_helper/main.swift")
            #expect(Int(entry["CODE_LINE"] ?? "") ?? 0 > 0)
            #expect(entry["CODE_FUNC"]?.isEmpty == false)
            #expect(entry["MESSAGE_ID"] == nil)
        }
        #expect(
            entries.contains { $0["MESSAGE"] == "first line\nsecond line" },
            "a message with a newline stays one entry"
        )
        #expect(
            !journal.standardError.contains("msg="),
            "nothing fell back to standard error:\n\(journal.standardError)"
        )
    }

    @Test func eachEventKindCarriesItsMessageID() async throws {
        let id = "reachd-test-ids-\(UUID().uuidString.prefix(8))"
        let journal = try await helper(id)
        for event in ReachLogEvent.allCases {
            journal.send("notice\tevent \(event.rawValue)\t\(ReachLogEvent.metadataKey)=\(event.rawValue)")
        }
        journal.send("info\tnot a known event\t\(ReachLogEvent.metadataKey)=something_else")
        journal.closeInput()
        let status = await journal.finish()
        #expect(status == 0, "the helper exited with \(status); its standard error:\n\(journal.standardError)")
        let entries = try await journal.waitForEntries(
            ["SYSLOG_IDENTIFIER=\(id)"],
            count: ReachLogEvent.allCases.count + 1
        )
        for event in ReachLogEvent.allCases {
            let entry = entries.first { $0["MESSAGE"] == "event \(event.rawValue)" }
            #expect(entry?["MESSAGE_ID"] == event.journalMessageID, "\(event)")
            #expect(entry?["REACHD_EVENT"] == event.rawValue)
        }
        let unknown = try #require(entries.first { $0["MESSAGE"] == "not a known event" })
        #expect(unknown["MESSAGE_ID"] == nil)
        #expect(Set(ReachLogEvent.allCases.map(\.journalMessageID)).count == ReachLogEvent.allCases.count)
    }

    @Test func journalctlExplainsEventsWithTheInstalledCatalog() async throws {
        let id = "reachd-test-catalog-\(UUID().uuidString.prefix(8))"
        let journal = try await helper(id)
        try await journal.installCatalog()
        journal.send(
            "warning\tdisconnected: timeout (target server)\tevent=connectivity_lost\treason=timeout\ttarget=server"
        )
        journal.send("notice\ttarget server down\tevent=target_down\treason=connection_refused\ttarget=server")
        journal.closeInput()
        let status = await journal.finish()
        #expect(status == 0, "the helper exited with \(status); its standard error:\n\(journal.standardError)")
        _ = try await journal.waitForEntries(["SYSLOG_IDENTIFIER=\(id)"], count: 2)
        let (_, text) = try await journal.inside(["/usr/bin/journalctl", "--no-pager", "-x", "SYSLOG_IDENTIFIER=\(id)"])
        #expect(text.contains("Subject: Connectivity lost: timeout"), "\(text)")
        #expect(text.contains("Defined-By: reachd"))
        #expect(text.contains("Support: man:reachd(8)"))
        #expect(text.contains("this machine cannot reach its"))
        #expect(text.contains("Subject: Target server is down"))
        #expect(text.contains("failed: connection_refused."))
    }

    /// A real reachd whose target turns slow: the quality change is an entry of its own
    /// (`quality_changed`'s MESSAGE_ID, the `REACHD_QUALITY` fields), and `journalctl -x` explains
    /// it with the installed catalog's entry, the state put in its subject.
    @Test func aQualityChangeIsAnEntryOfItsOwnThatJournalctlExplains() async throws {
        let directory = try TemporaryDirectory("journal-quality")
        let server = try StandInServer(mode: "slow 0.3")
        try await server.waitUntilReady()
        let configuration = "\(directory.path)/reachd.yaml"
        try """
        quality: { latency: 100ms, window: 3s }
        targets:
          - { name: api, url: "http://127.0.0.1:\(server.port)/health" }
        """.write(toFile: configuration, atomically: true, encoding: .utf8)
        let reachd = try await PrivateJournal.reachd(["--config", configuration])
        try await reachd.installCatalog()
        let id = ReachLogEvent.qualityChanged.journalMessageID
        let entries = try await reachd.waitForEntries(
            ["SYSLOG_IDENTIFIER=reachd", "_PID=\(reachd.pid)", "MESSAGE_ID=\(id)"],
            count: 1,
            timeout: .seconds(30)
        )
        let entry = try #require(entries.first)
        #expect(entry["MESSAGE"]?.hasPrefix("connection impaired: server (target api): latency ") == true, "\(entry)")
        #expect(entry["PRIORITY"] == "4")
        #expect(entry["REACHD_EVENT"] == "quality_changed")
        #expect(entry["REACHD_QUALITY"] == "impaired")
        #expect(entry["REACHD_QUALITY_FAULT"] == "server")
        #expect(entry["REACHD_QUALITY_TARGET"] == "api")
        #expect(entry["REACHD_QUALITY_EXCEEDED"] == "latency")
        #expect(entry["REACHD_QUALITY_BUDGET"] == "100")
        #expect(Int(entry["REACHD_QUALITY_VALUE"] ?? "").map { $0 >= 300 } == true, "ms: \(entry)")
        let (_, text) = try await reachd.inside(["/usr/bin/journalctl", "--no-pager", "-x", "MESSAGE_ID=\(id)"])
        #expect(text.contains("Subject: Connection quality: impaired"), "\(text)")
        #expect(text.contains("Defined-By: reachd"))
        #expect(text.contains("this machine still reaches"))
        #expect(text.contains("REACHD_QUALITY_FAULT says where it is slow"))
        kill(reachd.pid, SIGTERM)
        #expect(await reachd.finish() == 0)
        await server.stop()
    }

    @Test func autoPicksTheJournalWhenItsSocketAnswers() async throws {
        let journal = try await helper("reachd-test-auto-\(UUID().uuidString.prefix(8))", target: "auto")
        #expect(try await journal.waitForOutput("target ").contains("target journald"))
        journal.closeInput()
        let status = await journal.finish()
        #expect(status == 0, "the helper exited with \(status); its standard error:\n\(journal.standardError)")
    }

    @Test func autoPicksStandardErrorWithoutAJournal() async throws {
        let journal = try await helper(
            "reachd-test-auto-\(UUID().uuidString.prefix(8))",
            target: "auto",
            journald: false
        )
        #expect(try await journal.waitForOutput("target ").contains("target stderr"))
        journal.send("info\tto standard error\tstate=connected")
        journal.closeInput()
        let status = await journal.finish()
        #expect(status == 0, "the helper exited with \(status); its standard error:\n\(journal.standardError)")
        #expect(journal.standardError.contains("msg=\"to standard error\" state=connected"), "\(journal.standardError)")
    }

    @Test func autoPicksTheJournalWhenStandardErrorIsTheJournalStream() async throws {
        // No journald answers, but $JOURNAL_STREAM names standard error: as under a service.
        let journal = try await helper(
            "reachd-test-auto-\(UUID().uuidString.prefix(8))",
            target: "auto",
            journald: false,
            markJournalStream: true
        )
        #expect(try await journal.waitForOutput("target ").contains("target journald"))
        journal.closeInput()
        let status = await journal.finish()
        #expect(status == 0, "the helper exited with \(status); its standard error:\n\(journal.standardError)")
    }

    @Test func reachdLogsItsStartAndStopToTheJournal() async throws {
        let reachd = try await PrivateJournal.reachd(["--config", BuiltProducts.shippedConfiguration])
        let started = try await reachd.waitForEntries(
            ["SYSLOG_IDENTIFIER=reachd", "_PID=\(reachd.pid)", "MESSAGE_ID=\(ReachLogEvent.started.journalMessageID)"],
            count: 1
        )
        #expect(started.first?["MESSAGE"]?.hasPrefix("reachd \(ReachVersion.current) starting") == true, "\(started)")
        #expect(started.first?["REACHD_TARGETS"] == "1")
        #expect(started.first?["PRIORITY"] == "6")
        _ = try await reachd.waitForEntries(
            ["SYSLOG_IDENTIFIER=reachd", "_PID=\(reachd.pid)", "MESSAGE=reachd running"],
            count: 1
        )
        kill(reachd.pid, SIGTERM)
        #expect(await reachd.finish() == 0)
        let stopping = try await reachd.waitForEntries(
            ["SYSLOG_IDENTIFIER=reachd", "MESSAGE_ID=\(ReachLogEvent.stopping.journalMessageID)"],
            count: 1
        )
        #expect(stopping.first?["MESSAGE"] == "reachd stopping")
        _ = try await reachd.waitForEntries(["SYSLOG_IDENTIFIER=reachd", "MESSAGE=reachd stopped"], count: 1)
        #expect(!reachd.standardError.contains("msg="), "every line went to the journal:\n\(reachd.standardError)")
    }
}
