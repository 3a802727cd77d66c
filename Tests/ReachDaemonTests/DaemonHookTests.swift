import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// Hooks through a real reachd: a target that goes away and comes back runs the lost and restored
/// hooks, whose output lands in reachd's log under their names, and is counted in /metrics.
@Suite("reachd runs hooks", .serialized)
struct DaemonHookTests {
    @Test func aTargetThatGoesAwayAndComesBackRunsTheLostAndRestoredHooks() async throws {
        let directory = try TemporaryDirectory("daemon-hooks")
        for (folder, line) in [
            ("lost.d", "lost: $REACHD_REASON was $REACHD_PREVIOUS_STATE"),
            ("restored.d", "restored: #$REACHD_SEQUENCE"),
        ] {
            try FileManager.default.createDirectory(atPath: "\(directory)/\(folder)", withIntermediateDirectories: true)
            let hook = "\(directory)/\(folder)/10-note"
            try await writeExecutable("#!/bin/sh\necho \"\(line)\"\n", to: hook)
        }
        let listener = try LoopbackListener()
        let config = "\(directory)/reachd.yaml"
        try """
        targets:
          - { name: local, kind: tcp, address: "127.0.0.1:\(listener.port)", interval: 200ms, timeout: 1s }
        hooks: { restored_dir: \(directory)/restored.d, lost_dir: \(directory)/lost.d, timeout: 5s }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let reachd = try ReachdProcess(["--config", config])
        defer { if reachd.isRunning { reachd.signal(SIGKILL) } }
        let port = try await reachd.waitForPort()
        _ = try await reachd.waitForLog(containing: "msg=\"connected: healthy\"")
        // The hook service registers its series as it starts, beside the first verdict, not before it.
        try await waitUntil("the hooks' series exist before any run", timeout: .seconds(5), every: .milliseconds(20)) {
            (try? await loopbackGet(port: port, path: "/metrics"))?.body.contains(
                #"reachd_hook_runs_total{hook="10-note",result="ok"} 0"#
            ) == true
        }

        listener.stop()
        let afterLoss = try await reachd.waitForLog(containing: "10-note: lost: connection_refused was connected")
        #expect(afterLoss.contains("hook=10-note"))
        #expect(afterLoss.contains("stream=stdout"))
        try listener.start()
        let afterRestore = try await reachd.waitForLog(containing: "10-note: restored: #")
        #expect(afterRestore.contains("msg=\"hook 10-note exited 0\""))

        // The log line comes just before the count: wait for the count.
        try await waitUntil("both runs counted", every: .milliseconds(20)) {
            let metrics = (try? await loopbackGet(port: port, path: "/metrics").body) ?? ""
            return metrics.contains(#"reachd_hook_runs_total{hook="10-note",result="ok"} 2"#)
                && metrics.contains(#"reachd_hook_duration_seconds_count{hook="10-note"} 2"#)
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool") {
            let exposition = try await loopbackGet(port: port, path: "/metrics").body
            let check = try await promtoolCheck(exposition)
            #expect(check.status == 0, "promtool check metrics: \(check.output)")
        }
        reachd.signal(SIGTERM)
        #expect(await reachd.finish().status == 0)
        listener.stop()
    }

    @Test func aReloadSwitchesToTheNewHookDirectoryAtTheNextTransition() async throws {
        let directory = try TemporaryDirectory("daemon-hooks")
        for folder in ["old.d", "new.d"] {
            try FileManager.default.createDirectory(atPath: "\(directory)/\(folder)", withIntermediateDirectories: true)
            let hook = "\(directory)/\(folder)/10-say"
            try await writeExecutable("#!/bin/sh\necho \"from \(folder)\"\n", to: hook)
        }
        let listener = try LoopbackListener()
        let config = "\(directory)/reachd.yaml"
        func write(lostDir: String) throws {
            try """
            targets:
              - { name: local, kind: tcp, address: "127.0.0.1:\(listener.port)", interval: 200ms, timeout: 1s }
            hooks: { lost_dir: \(directory)/\(lostDir) }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        }
        try write(lostDir: "old.d")
        let reachd = try ReachdProcess(["--config", config])
        defer { if reachd.isRunning { reachd.signal(SIGKILL) } }
        _ = try await reachd.waitForLog(containing: "msg=\"connected: healthy\"")
        try write(lostDir: "new.d")
        reachd.signal(SIGHUP)
        _ = try await reachd.waitForLog(containing: "configuration reloaded")
        listener.stop()
        let log = try await reachd.waitForLog(containing: "10-say: from new.d")
        #expect(!log.contains("10-say: from old.d"))
        reachd.signal(SIGTERM)
        #expect(await reachd.finish().status == 0)
    }
}

/// `promtool check metrics` on `exposition`: 0 when clean (3 for lint problems, 1 for parse errors).
private func promtoolCheck(_ exposition: String) async throws -> (status: Int32, output: String) {
    let result = try await runProgram("/usr/bin/promtool", ["check", "metrics"], input: exposition)
    return (result.status, result.output + result.errors)
}
