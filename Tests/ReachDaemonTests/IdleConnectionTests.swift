import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// Thousands of idle clients against the real daemon. Both sides run outside the test process:
/// Foundation's `Process.run()` on Linux reads past a buffer when the spawning process has more
/// than about 1,300 descriptors open (swift-corelibs-foundation#5472), and other tests spawn.
@Suite("reachd under thousands of idle connections")
struct IdleConnectionTests {
    struct Report: Decodable {
        let rssBeforeKib: Int
        let rssDuringKib: Int
        let freshStatusLine: String
        let closed: Int
        let secondsToClose: Double
    }

    static let client = URL(filePath: #filePath).deletingLastPathComponent().appending(
        path: "Clients/idle_connections.py"
    )

    @Test func twoThousandIdleConnectionsCostBoundedMemoryAndAreClosed() async throws {
        let directory = try TemporaryDirectory("idle")
        let config = directory.url.appending(path: "reachd.yaml")
        try "server: { base_url: \"http://127.0.0.1:1\" }\napi: { idle_timeout: 3s }\n".write(
            to: config,
            atomically: true,
            encoding: .utf8
        )
        let reachd = try ReachdProcess(["--config", config.path])
        defer { reachd.signal(SIGKILL) }
        let port = try await reachd.waitForPort()

        let connections = 2000
        let arguments = [Self.client.path, "\(port)", "\(reachd.processIdentifier)", "\(connections)"]
        let client = try ChildProcess(
            "idle connections",
            executable: "/usr/bin/env",
            arguments: ["python3"] + arguments
        )
        let result = await client.finish(timeout: .seconds(90))
        let stdout = result.output
        #expect(result.status == 0, "\(result.errors)")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let report = try decoder.decode(Report.self, from: Data(stdout.utf8))
        print(
            "reachd RSS \(report.rssBeforeKib) KiB, with \(connections) idle connections \(report.rssDuringKib) KiB;",
            "\(report.closed) closed by the server \(report.secondsToClose) s after the fresh request"
        )

        #expect(report.freshStatusLine == "HTTP/1.1 200 OK", "everyone else is still served while they sit there")
        #expect(report.rssDuringKib - report.rssBeforeKib < 64 * 1024)
        // A connection the kernel held in a full accept queue is accepted (and its timeout starts)
        // late; the client allows 30 s for that.
        #expect(report.closed == connections)
    }
}
