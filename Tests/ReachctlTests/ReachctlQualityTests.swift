import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// Quality end to end through a real reachd and reachctl: a loopback target 300 ms late against a
/// 100 ms budget reads `connected, slow: …` in `reachctl status`, is a `quality_changed` log entry
/// with its fields, and, good again, an impaired spell in `reachctl history`.
@Suite("reachctl and the quality")
struct ReachctlQualityTests {
    @Test func aSlowTargetReadsConnectedButSlowAndItsSpellIsInTheHistory() async throws {
        let directory = try TemporaryDirectory("reachctl-quality")
        let server = try StandInServer(mode: "slow 0.3")
        try await server.waitUntilReady()
        let reachd = try ReachdProcess(
            configuration: """
                quality: { latency: 100ms, window: 3s }
                targets:
                  - { name: api, url: "http://127.0.0.1:\(server.port)/health" }
                history:
                  path: \(directory.path)/history.sqlite
                """,
            in: directory.path
        )
        let endpoint = "http://127.0.0.1:\(try await reachd.waitForPort())"
        let impaired = try await reachd.waitForLog(containing: "connection impaired", timeout: .seconds(30))
        let line = impaired.split(separator: "\n").first { $0.contains("connection impaired") } ?? ""
        for field in [
            "event=quality_changed", "quality=impaired", "quality_fault=server", "quality_target=api",
            "quality_exceeded=latency", "quality_budget=100",
        ] {
            #expect(line.contains(field), "\(line)")
        }

        let status = try await reachctl(["--endpoint", endpoint, "status"])
        #expect(status.status == 0, "impaired is connected: exit 0")
        let lines = status.output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("connected, slow: api ") == true, "\(status.output)")
        #expect(lines.first?.hasSuffix(" ms (budget 100 ms)") == true, "\(status.output)")
        #expect(lines.contains { $0.hasPrefix("quality:    impaired") }, "\(status.output)")

        try await server.set("ok")
        try await reachd.waitForLog(containing: "connection quality good again", timeout: .seconds(30))
        try await waitUntil("the impaired spell is in the history", timeout: .seconds(20), every: .milliseconds(200)) {
            let history = try await reachctl(["--endpoint", endpoint, "history"])
            return history.output.split(separator: "\n").contains {
                $0.contains("latency") && $0.contains("server") && $0.hasSuffix("api")
            }
        }
        let history = try await reachctl(["--endpoint", endpoint, "history"])
        #expect(history.output.contains("IMPAIRED"), "\(history.output)")
        await reachd.kill()
        await server.stop()
    }
}
