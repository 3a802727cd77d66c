import Foundation
import ReachTestRigs
import ReachTesting
import Testing

private let sseClient = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appending(path: "ReachServerTests/Clients/sse_client.py").path

@Suite("Reloading reachd's configuration on SIGHUP", .serialized)
struct ReloadProcessTests {
    private static func config(_ targets: [(name: String, url: String)], policy: String = "all") -> String {
        "policy: \(policy)\ntargets:\n" + targets.map { "  - name: \($0.name)\n    url: \($0.url)\n" }.joined()
    }

    @Test(
        .enabled(
            if: PythonModules.importable("httpx_sse", installing: ["httpx", "httpx-sse"]),
            "needs httpx-sse (scripts/test installs it)"
        )
    )
    func targetsAreAddedRemovedAndChangedUnderALiveSubscriber() async throws {
        let server = try await HealthServer()
        let refused = "http://127.0.0.1:1/api/v1/health"
        let directory = try TemporaryDirectory("reload")
        let file = directory.url.appending(path: "reachd.yaml")
        try Self.config([("a", server.url), ("b", refused)]).write(to: file, atomically: true, encoding: .utf8)
        let reachd = try ReachdProcess(["--config", file.path])
        defer { reachd.signal(SIGTERM) }
        let port = try await reachd.waitForPort()
        _ = try await reachd.waitForLog(containing: "disconnected: connection_refused (target b)")

        let subscriber = try ChildProcess(
            "sse client",
            executable: "/usr/bin/env",
            arguments: ["python3", sseClient, "http://127.0.0.1:\(port)/v1/events", "5"]
        )
        try await subscriber.waitForLine { $0.contains("disconnected connection_refused") }

        // b removed, c added, a untouched: awaiting c's first answer, then connected; a kept its status throughout.
        try Self.config([("a", server.url), ("c", server.url)]).write(to: file, atomically: true, encoding: .utf8)
        reachd.signal(SIGHUP)
        _ = try await reachd.waitForLog(containing: "configuration reloaded: targets +1 -1 ~0 (added: c; removed: b)")
        try await subscriber.waitForLine { $0.contains("connected healthy") }
        let status = try await loopbackGet(port: port, path: "/v1/status")
        let document = try JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any]
        let targets = (document?["targets"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(targets == ["a", "c"])

        // a's URL changes: it starts over from unknown, and its refusal is seen on the same stream.
        try Self.config([("a", refused), ("c", server.url)]).write(to: file, atomically: true, encoding: .utf8)
        reachd.signal(SIGHUP)
        _ = try await reachd.waitForLog(containing: "configuration reloaded: targets +0 -0 ~1 (changed: a)")
        let finished = await subscriber.finish(timeout: .seconds(20))
        let output = finished.output
        #expect(finished.status == 0, "\(finished.errors)")
        let lines = output.split(separator: "\n").dropFirst()
        #expect(
            lines.map { $0.split(separator: " ").dropFirst(2).prefix(2).joined(separator: " ") }
                == [
                    "disconnected connection_refused", "disconnected awaiting_probe", "connected healthy",
                    "disconnected awaiting_probe", "disconnected connection_refused",
                ],
            "\(output)"
        )
        #expect(lines.allSatisfy { $0.hasSuffix("False") }, "one stream, never reset: \(output)")
    }

    @Test func anInvalidConfigurationIsRejectedWithTheCheckConfigMessagesAndTheOldOneKeepsRunning() async throws {
        let directory = try TemporaryDirectory("reload-bad")
        let file = directory.url.appending(path: "reachd.yaml")
        try Self.config([("a", "http://127.0.0.1:1/health")]).write(to: file, atomically: true, encoding: .utf8)
        let reachd = try ReachdProcess(["--config", file.path])
        defer { reachd.signal(SIGTERM) }
        let port = try await reachd.waitForPort()
        _ = try await reachd.waitForLog(containing: "(target a)")

        try "targets:\n  - name: a\n    url: http://127.0.0.1:1/health\n    timout: 3s\npolicy: most\n".write(
            to: file,
            atomically: true,
            encoding: .utf8
        )
        let checkOutput = try await ReachdProcess(["--check-config", file.path]).finish().output
        reachd.signal(SIGHUP)
        let log = try await reachd.waitForLog(containing: "configuration reload rejected")
        let rejected = log.split(separator: "\n").first { $0.contains("configuration reload rejected") } ?? ""
        #expect(rejected.contains("event=reload_rejected"), "\(rejected)")
        for problem in checkOutput.split(separator: "\n") {
            #expect(
                rejected.contains(String(problem).replacingOccurrences(of: "\"", with: "\\\"")),
                "\(problem) in \(rejected)"
            )
        }
        #expect(reachd.isRunning)
        let status = try await loopbackGet(port: port, path: "/v1/status")
        #expect(status.body.contains("\"name\":\"a\""), "the old configuration is still in force")
    }
}
