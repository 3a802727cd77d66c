import Foundation
import ReachTesting
import Testing

/// reachd records an outage of a real loopback server in its history file, answers it on
/// `/v1/history` and through `reachctl history`, and still has it after being killed and started again.
@Suite("History in a real reachd", .serialized)
struct HistoryProcessTests {
    private let reachctlBinary = reachdBinary.deletingLastPathComponent().appending(path: "reachctl")

    private func history(port: Int, _ query: String) throws -> [String: Any] {
        let answer = try loopbackGet(port: port, path: "/v1/history?\(query)")
        #expect(answer.status == 200, "\(answer.body)")
        return try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
    }

    private func waitForState(_ state: String, port: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if try loopbackGet(port: port, path: "/v1/status").body.contains("\"state\":\"\(state)\"") { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("reachd never reported \(state)")
    }

    /// Writes a configuration in `directory` probing `server` every 100 ms with history at `path`,
    /// and starts reachd on it; returns once it records and is connected.
    private func startRecording(
        _ server: HealthServer, historyAt path: String, in directory: TemporaryDirectory
    ) async throws -> (reachd: ReachdProcess, port: Int, config: URL) {
        let config = directory.url.appending(path: "reachd.yaml")
        try """
            targets:
              - name: api
                kind: http
                url: \(server.url)
                interval: 100ms
                timeout: 500ms
            history:
              path: \(path)
            """.write(to: config, atomically: true, encoding: .utf8)
        let reachd = try ReachdProcess(["--config", config.path])
        let port = try #require(try await reachd.waitForPort())
        _ = try await reachd.waitForLog(containing: "history: recording to \(path)")
        try await waitForState("connected", port: port)
        return (reachd, port, config)
    }

    @Test func anOutageIsRecordedAnsweredAndSurvivesARestart() async throws {
        let directory = try TemporaryDirectory("history-daemon")
        let server = try await HealthServer()
        var (reachd, port, config) = try await startRecording(server, historyAt: "\(directory.path)/state/history.sqlite", in: directory)

        await server.stop()
        try await waitForState("disconnected", port: port)
        try await Task.sleep(for: .milliseconds(500))
        let restarted = try await HealthServer(port: server.port)
        try await waitForState("connected", port: port)
        // One commit a second: wait for the one that holds the restoration.
        try await Task.sleep(for: .milliseconds(1500))

        let document = try history(port: port, "since=1h")
        let outages = try #require(document["outages"] as? [[String: Any]])
        #expect(outages.count == 1, "\(outages)")
        let outage = try #require(outages.first)
        #expect(outage["reason"] as? String == "connection_refused")
        #expect(outage["fault"] as? String == "server")
        #expect(outage["target"] as? String == "api")
        #expect(outage["end"] is String, "the outage is over")
        #expect((outage["duration_seconds"] as? Double ?? 0) >= 0.4)
        let transitions = try #require(document["transitions"] as? [[String: Any]])
        // An `unknown` first, when history opened before the first probe's result.
        #expect(transitions.compactMap { $0["state"] as? String }.filter { $0 != "unknown" } == ["connected", "disconnected", "connected"])
        let forTarget = try history(port: port, "since=1h&target=api")
        #expect((forTarget["outages"] as? [[String: Any]])?.first?["reason"] as? String == "connection_refused")
        #expect(try loopbackGet(port: port, path: "/v1/history?since=yesterday").status == 400)

        let listing = try await Child(reachctlBinary, ["--endpoint", "http://127.0.0.1:\(port)", "history", "--since", "1h"]).finish()
        #expect(listing.status == 0, "\(listing.stderr)")
        let lines = listing.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("START") == true, "\(listing.stdout)")
        #expect(lines.contains { $0.contains(outage["start"] as? String ?? "?") && $0.contains("connection_refused") && $0.contains("server") && $0.contains("api") }, "\(listing.stdout)")
        #expect(lines.last?.hasPrefix("uptime: ") == true)

        // Killed outright, then started again: the outage is still there, and the time between runs is unknown.
        kill(reachd.process.processIdentifier, SIGKILL)
        _ = try await reachd.finish()
        try await Task.sleep(for: .milliseconds(500))
        reachd = try ReachdProcess(["--config", config.path])
        port = try #require(try await reachd.waitForPort())
        _ = try await reachd.waitForLog(containing: "history: recording to")
        try await waitForState("connected", port: port)
        let after = try history(port: port, "since=1h")
        #expect((after["outages"] as? [[String: Any]])?.first?["start"] as? String == outage["start"] as? String)
        #expect((after["gaps"] as? [[String: Any]] ?? []).count >= 2, "before the first run, and between the two")
        // The uptime ratios are computed a few seconds into a run, then once a minute.
        let deadline = ContinuousClock.now + .seconds(15)
        var metrics = ""
        while ContinuousClock.now < deadline, !metrics.contains("reachd_uptime_ratio{window=\"24h\"}") {
            try await Task.sleep(for: .milliseconds(200))
            metrics = try loopbackGet(port: port, path: "/metrics").body
        }
        #expect(metrics.contains("reachd_uptime_ratio{window=\"90d\"}"), "\(metrics)")
        kill(reachd.process.processIdentifier, SIGTERM)
        _ = try await reachd.finish()
        await restarted.stop()
    }

    /// The history file on a tmpfs of 1 MiB that the test fills while an outage happens: reachd
    /// says so at `error` level and keeps running, and once space is freed it writes the outage it
    /// kept in memory (the recorder's own test checks that what waits stays within its bound).
    @Test(.enabled(if: TinyFileSystem.isAvailable, "needs root to mount a tmpfs"))
    func aFullDiskIsLoggedAndWhatWaitedIsWrittenOnceSpaceIsFreed() async throws {
        let directory = try TemporaryDirectory("history-full")
        let disk = try await TinyFileSystem(size: "1m")
        let server = try await HealthServer()
        let (reachd, port, _) = try await startRecording(server, historyAt: "\(disk.path)/history.sqlite", in: directory)
        try await Task.sleep(for: .milliseconds(1500))
        // An `unknown` first, when history opened before the first probe's result.
        let transitions = { (document: [String: Any]) in
            (document["transitions"] as? [[String: Any]] ?? []).compactMap { $0["state"] as? String }.filter { $0 != "unknown" }
        }
        #expect(transitions(try history(port: port, "since=1h")) == ["connected"])

        try disk.fill()
        await server.stop()
        try await waitForState("disconnected", port: port)
        let log = try await reachd.waitForLog(containing: "history: cannot write", timeout: .seconds(5))
        let line = log.split(separator: "\n").first { $0.contains("history: cannot write") } ?? ""
        #expect(line.contains("level=error") && line.contains("is full"), "\(line)")
        let restarted = try await HealthServer(port: server.port)
        try await waitForState("connected", port: port)
        try await Task.sleep(for: .milliseconds(1500))
        #expect(reachd.process.isRunning)
        #expect(try loopbackGet(port: port, path: "/v1/status").status == 200)
        #expect(transitions(try history(port: port, "since=1h")) == ["connected"], "nothing written while the disk is full")

        try disk.free()
        _ = try await reachd.waitForLog(containing: "history: writing works again", timeout: .seconds(5))
        let document = try history(port: port, "since=1h")
        #expect(transitions(document) == ["connected", "disconnected", "connected"], "\(document)")
        let outages = document["outages"] as? [[String: Any]] ?? []
        #expect(outages.count == 1 && outages.first?["reason"] as? String == "connection_refused", "\(outages)")

        kill(reachd.process.processIdentifier, SIGTERM)
        let (status, _, stderr) = try await reachd.finish()
        #expect(status == 0, "\(stderr)")
        await restarted.stop()
        await disk.unmount()
    }

    @Test func aReloadTurnsHistoryOn() async throws {
        let directory = try TemporaryDirectory("history-daemon")
        let config = directory.url.appending(path: "reachd.yaml")
        let base = "targets:\n  - name: api\n    kind: tcp\n    address: 127.0.0.1:1\n"
        try (base + "history:\n  enabled: false\n").write(to: config, atomically: true, encoding: .utf8)
        let reachd = try ReachdProcess(["--config", config.path])
        let port = try #require(try await reachd.waitForPort())
        #expect(try loopbackGet(port: port, path: "/v1/history").status == 503)
        try (base + "history:\n  path: \(directory.path)/history.sqlite\n").write(to: config, atomically: true, encoding: .utf8)
        kill(reachd.process.processIdentifier, SIGHUP)
        _ = try await reachd.waitForLog(containing: "history: recording to \(directory.path)/history.sqlite")
        let answer = try loopbackGet(port: port, path: "/v1/history?since=1h")
        #expect(answer.status == 200, "\(answer.body)")
        kill(reachd.process.processIdentifier, SIGTERM)
        _ = try await reachd.finish()
        #expect(FileManager.default.fileExists(atPath: directory.path + "/history.sqlite"))
    }

    @Test func anUnusablePathLeavesReachdRunningWithoutHistory() async throws {
        let directory = try TemporaryDirectory("history-daemon")
        let blocker = directory.path + "/file"
        try "not a directory".write(toFile: blocker, atomically: true, encoding: .utf8)
        let config = directory.url.appending(path: "reachd.yaml")
        try "targets:\n  - name: api\n    kind: tcp\n    address: 127.0.0.1:1\nhistory:\n  path: \(blocker)/history.sqlite\n"
            .write(to: config, atomically: true, encoding: .utf8)
        let reachd = try ReachdProcess(["--config", config.path])
        let port = try #require(try await reachd.waitForPort())
        let log = try await reachd.waitForLog(containing: "reachd runs without history")
        #expect(log.contains("level=error"), "\(log)")
        let answer = try loopbackGet(port: port, path: "/v1/history")
        #expect(answer.status == 503)
        #expect(answer.body.contains("history is off"), "\(answer.body)")
        #expect(reachd.process.isRunning)
        kill(reachd.process.processIdentifier, SIGTERM)
        let (status, _, _) = try await reachd.finish()
        #expect(status == 0)
    }
}
