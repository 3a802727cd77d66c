import Foundation
import ReachCore
import ReachLogging
import ReachTestRigs
import ReachTesting

/// A second reachd in the same namespace logs to a journald of the test's own while a fault comes
/// and goes: the journal holds one `connectivity_lost` and one `connectivity_restored` entry, with
/// their fields, for the one transition each way.
extension FaultMatrix {
    func journalLines(_ run: MatrixRun, directory: String) async {
        var row = MatrixCase(
            group: "journal",
            name: "a 503 and its end, in the journal",
            expected: "one lost and one restored entry"
        )
        let own = "\(directory)/journal"
        var journal: PrivateJournal?
        do {
            try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true)
            try """
            socket: \(own)/reachd.sock
            listen: 127.0.0.1:0
            targets:
              - name: server
                url: http://\(MatrixNetwork.serverName):\(FaultServer.port)/health
            """.write(toFile: "\(own)/reachd.yaml", atomically: true, encoding: .utf8)
            let started = try await PrivateJournal.reachd(
                ["--config", "\(own)/reachd.yaml"],
                listen: nil,
                namespace: run.network.host
            )
            journal = started
            let pid = "_PID=\(started.pid)"
            func matching(_ event: ReachLogEvent) -> [String] {
                ["SYSLOG_IDENTIFIER=reachd", pid, "MESSAGE_ID=\(event.journalMessageID)"]
            }
            _ = try await started.waitForEntries(["SYSLOG_IDENTIFIER=reachd", pid, "MESSAGE=reachd running"], count: 1)
            // Connected first (or there is no transition to log), then the fault, as the main reachd sees it.
            try await waitUntil("the journal reachd is connected", timeout: .seconds(10)) {
                (try? await runProgram(
                    "/usr/bin/curl",
                    ["-sf", "--unix-socket", "\(own)/reachd.sock", "http://localhost/v1/status"]
                ))?.output.contains(#""state":"connected""#) == true
            }
            // Each side of the fault is held until the journal has it: the two reachds probe at their own moments.
            var lost: [[String: String]] = []
            var restored: [[String: String]] = []
            await run.fault(
                "journal",
                "503, seen by both",
                reason: "http_status",
                bound: MatrixRun.answerBound,
                apply: {
                    try await run.server.set("503")
                    lost = try await started.waitForEntries(
                        matching(.connectivityLost),
                        count: 1,
                        timeout: MatrixRun.answerBound + .seconds(2)
                    )
                },
                restore: {
                    try await run.server.set("ok")
                    restored = try await started.waitForEntries(
                        matching(.connectivityRestored),
                        count: 1,
                        timeout: MatrixRun.restoreBound + .seconds(2)
                    )
                }
            )
            try await run.waitForAProbeLater()
            let (lostNow, restoredNow) = (
                try await started.entries(matching(.connectivityLost)),
                try await started.entries(matching(.connectivityRestored))
            )
            row.expected = "one lost, one restored entry (saw \(lostNow.count), \(restoredNow.count))"
            if lostNow.count != 1 || restoredNow.count != 1 {
                let all = try await started.entries(["SYSLOG_IDENTIFIER=reachd"]).map {
                    "\($0["_PID"] ?? "?") \($0["MESSAGE"] ?? "")"
                }
                row.failure =
                    "journal entries: \(lostNow.count) lost, \(restoredNow.count) restored; the journal: \(all.suffix(12))"
            } else if lost.first?["REACHD_REASON"] != "http_status" || lost.first?["REACHD_STATE"] != "disconnected"
                || restored.first?["REACHD_STATE"] != "connected"
            {
                row.failure = "fields: \(lost.first ?? [:]) / \(restored.first ?? [:])"
            }
        } catch {
            row.failure = "the test could not act: \(error)"
        }
        if let journal {
            kill(journal.pid, SIGTERM)
            _ = await journal.finish()
        }
        run.finish(row)
    }
}
