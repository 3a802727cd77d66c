import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// reachd records an outage of a real loopback server in its history file, answers it on
/// `/v1/history` and through `reachctl history`, and still has it after being killed and started again.
@Suite("History in a real reachd", .serialized)
struct HistoryProcessTests {
    private func history(port: Int, _ query: String) async throws -> [String: Any] {
        let answer = try await loopbackGet(port: port, path: "/v1/history?\(query)")
        #expect(answer.status == 200, "\(answer.body)")
        return try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
    }

    /// The verdict's transitions committed to the file (`/v1/history` reads only what is
    /// committed), less the `unknown` of each run's start (history opens before the first verdict).
    private func committedStates(port: Int) async throws -> [String] {
        let document = try await history(port: port, "since=1h")
        return (document["transitions"] as? [[String: Any]] ?? []).compactMap { $0["state"] as? String }.filter {
            $0 != "unknown"
        }
    }

    /// How long ago an RFC 3339 time of reachd's was.
    private func secondsSince(_ time: String) -> Double? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: time).map { Date().timeIntervalSince($0) }
    }

    /// The value of the unlabelled metric `name`.
    private func metric(_ name: String, port: Int) async throws -> Double? {
        let metrics = try await loopbackGet(port: port, path: "/metrics").body
        return metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
            Double($0.split(separator: " ").last ?? "")
        }
    }

    /// Writes a configuration in `directory` probing `server` every 100 ms with history at `path`,
    /// and starts reachd on it; returns once it records and is connected.
    private func startRecording(
        _ server: HealthServer,
        historyAt path: String,
        in directory: TemporaryDirectory
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
        let port = try await reachd.waitForPort()
        _ = try await reachd.waitForLog(containing: "history: recording to \(path)")
        try await reachd.waitForState("connected", port: port)
        return (reachd, port, config)
    }

    @Test func anOutageIsRecordedAnsweredAndSurvivesARestart() async throws {
        let directory = try TemporaryDirectory("history-daemon")
        let server = try await HealthServer()
        var (reachd, port, config) = try await startRecording(
            server,
            historyAt: "\(directory.path)/state/history.sqlite",
            in: directory
        )

        await server.stop()
        try await reachd.waitForState("disconnected", port: port)
        // Down for at least half a second, as reachd itself tells (its status's `since`).
        try await waitUntil("an outage half a second old", every: .milliseconds(10)) {
            let body = await ReachdProcess.status(port: port) ?? ""
            let since =
                (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["since"] as? String
            return since.flatMap(secondsSince).map { $0 >= 0.5 } ?? false
        }
        let restarted = try await HealthServer(port: server.port)
        try await reachd.waitForState("connected", port: port)
        // One commit a second: wait for the one that holds the restoration.
        try await waitUntil("the restoration committed", every: .milliseconds(20)) {
            let states = try await self.committedStates(port: port)
            return states.last == "connected" && states.count >= 3
        }

        let document = try await history(port: port, "since=1h")
        let outages = try #require(document["outages"] as? [[String: Any]])
        #expect(outages.count == 1, "\(outages)")
        let outage = try #require(outages.first)
        // Refused while the server stayed down, whether or not a probe in flight was reset first.
        #expect(outage["reason"] as? String == "connection_refused")
        #expect(outage["fault"] as? String == "server")
        #expect(outage["target"] as? String == "api")
        #expect(outage["end"] is String, "the outage is over")
        #expect((outage["duration_seconds"] as? Double ?? 0) >= 0.4)
        // One outage: a reason that changed within it (reset, then refused) is a transition of the same state.
        let states = try await committedStates(port: port).reduce(into: [String]()) {
            if $0.last != $1 { $0.append($1) }
        }
        #expect(states == ["connected", "disconnected", "connected"])
        let forTarget = try await history(port: port, "since=1h&target=api")
        #expect((forTarget["outages"] as? [[String: Any]])?.first?["reason"] as? String == "connection_refused")
        #expect(try await loopbackGet(port: port, path: "/v1/history?since=yesterday").status == 400)

        let listing = try await reachctl(["--endpoint", "http://127.0.0.1:\(port)", "history", "--since", "1h"])
        #expect(listing.status == 0, "\(listing.errors)")
        let lines = listing.output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("START") == true, "\(listing.output)")
        #expect(
            lines.contains {
                $0.contains(outage["start"] as? String ?? "?") && $0.contains("connection_refused")
                    && $0.contains("server") && $0.contains("api")
            },
            "\(listing.output)"
        )
        #expect(lines.last?.hasPrefix("uptime: ") == true)

        // Killed outright, then started again: the outage is still there, and the time between runs is unknown.
        await reachd.kill()
        reachd = try ReachdProcess(["--config", config.path])
        port = try await reachd.waitForPort()
        _ = try await reachd.waitForLog(containing: "history: recording to")
        try await reachd.waitForState("connected", port: port)
        let after = try await history(port: port, "since=1h")
        #expect((after["outages"] as? [[String: Any]])?.first?["start"] as? String == outage["start"] as? String)
        #expect((after["gaps"] as? [[String: Any]] ?? []).count >= 2, "before the first run, and between the two")
        // The uptime ratios are computed a few seconds into a run, then once a minute.
        let metrics = try await waitFor("the uptime ratios", timeout: .seconds(15), every: .milliseconds(50)) {
            () -> String? in
            let metrics = try await loopbackGet(port: port, path: "/metrics").body
            return metrics.contains("reachd_uptime_ratio{window=\"24h\"}") ? metrics : nil
        }
        #expect(metrics.contains("reachd_uptime_ratio{window=\"90d\"}"), "\(metrics)")
        reachd.signal(SIGTERM)
        _ = await reachd.finish()
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
        let (reachd, port, _) = try await startRecording(
            server,
            historyAt: "\(disk.path)/history.sqlite",
            in: directory
        )
        try await waitUntil("the first verdict committed", every: .milliseconds(20)) {
            try await self.committedStates(port: port) == ["connected"]
        }

        try disk.fill()
        await server.stop()
        try await reachd.waitForState("disconnected", port: port)
        let log = try await reachd.waitForLog(containing: "history: cannot write", timeout: .seconds(5))
        let line = log.split(separator: "\n").first { $0.contains("history: cannot write") } ?? ""
        #expect(line.contains("level=error") && line.contains("is full"), "\(line)")
        // What waits grows with each failed commit: the outage's two transitions (verdict and target) at least.
        let waitingBefore = try await waitFor("the outage waiting in memory", every: .milliseconds(20)) {
            () -> Double? in
            let rows = try await self.metric("reachd_history_pending_rows", port: port) ?? 0
            return rows >= 2 ? rows : nil
        }
        let restarted = try await HealthServer(port: server.port)
        try await reachd.waitForState("connected", port: port)
        // A commit tried after the restoration failed too: its two transitions wait beside the outage's.
        try await waitUntil("the restoration waiting in memory", every: .milliseconds(20)) {
            (try await self.metric("reachd_history_pending_rows", port: port) ?? 0) >= waitingBefore + 2
        }
        #expect(reachd.isRunning)
        #expect(try await loopbackGet(port: port, path: "/v1/status").status == 200)
        #expect(try await committedStates(port: port) == ["connected"], "nothing written while the disk is full")

        try disk.free()
        _ = try await reachd.waitForLog(containing: "history: writing works again", timeout: .seconds(5))
        let document = try await history(port: port, "since=1h")
        let states = try await committedStates(port: port).reduce(into: [String]()) {
            if $0.last != $1 { $0.append($1) }
        }
        #expect(states == ["connected", "disconnected", "connected"], "\(document)")
        #expect(try await metric("reachd_history_pending_rows", port: port) == 0)
        let outages = document["outages"] as? [[String: Any]] ?? []
        #expect(outages.count == 1 && outages.first?["reason"] as? String == "connection_refused", "\(outages)")

        reachd.signal(SIGTERM)
        let result = await reachd.finish()
        #expect(result.status == 0, "\(result.errors)")
        await restarted.stop()
        await disk.unmount()
    }

    @Test func aReloadTurnsHistoryOn() async throws {
        let directory = try TemporaryDirectory("history-daemon")
        let config = directory.url.appending(path: "reachd.yaml")
        let base = "targets:\n  - name: api\n    kind: tcp\n    address: 127.0.0.1:1\n"
        try (base + "history:\n  enabled: false\n").write(to: config, atomically: true, encoding: .utf8)
        let reachd = try ReachdProcess(["--config", config.path])
        let port = try await reachd.waitForPort()
        #expect(try await loopbackGet(port: port, path: "/v1/history").status == 503)
        try (base + "history:\n  path: \(directory.path)/history.sqlite\n").write(
            to: config,
            atomically: true,
            encoding: .utf8
        )
        reachd.signal(SIGHUP)
        _ = try await reachd.waitForLog(containing: "history: recording to \(directory.path)/history.sqlite")
        let answer = try await loopbackGet(port: port, path: "/v1/history?since=1h")
        #expect(answer.status == 200, "\(answer.body)")
        reachd.signal(SIGTERM)
        _ = await reachd.finish()
        #expect(FileManager.default.fileExists(atPath: directory.path + "/history.sqlite"))
    }

    @Test func anUnusablePathLeavesReachdRunningWithoutHistory() async throws {
        let directory = try TemporaryDirectory("history-daemon")
        let blocker = directory.path + "/file"
        try "not a directory".write(toFile: blocker, atomically: true, encoding: .utf8)
        let config = directory.url.appending(path: "reachd.yaml")
        try
            "targets:\n  - name: api\n    kind: tcp\n    address: 127.0.0.1:1\nhistory:\n  path: \(blocker)/history.sqlite\n"
            .write(to: config, atomically: true, encoding: .utf8)
        let reachd = try ReachdProcess(["--config", config.path])
        let port = try await reachd.waitForPort()
        let log = try await reachd.waitForLog(containing: "reachd runs without history")
        #expect(log.contains("level=error"), "\(log)")
        let answer = try await loopbackGet(port: port, path: "/v1/history")
        #expect(answer.status == 503)
        #expect(answer.body.contains("history is off"), "\(answer.body)")
        #expect(reachd.isRunning)
        reachd.signal(SIGTERM)
        #expect(await reachd.finish().status == 0)
    }
}
