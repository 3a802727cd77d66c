import Foundation
import HummingbirdTesting
import ReachCore
import ReachServer
import ReachTesting
import Testing

/// The event stream read by an SSE implementation nobody here wrote: Python's httpx-sse.
@Suite("Status API: an independent SSE client", .serialized)
struct PythonSSEClientTests {
    static let script = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Clients/sse_client.py")
        .path

    /// Runs the client until it has printed `count` events (plus its "open" line) and exited.
    final class Client: @unchecked Sendable {
        let process = Process()
        private let output = Pipe()
        private var text = ""

        init(url: String, count: Int, lastEventID: String? = nil) throws {
            process.executableURL = URL(filePath: "/usr/bin/env")
            process.arguments =
                ["python3", PythonSSEClientTests.script, url, String(count)] + (lastEventID.map { [$0] } ?? [])
            process.standardOutput = output
            try process.run()
        }

        /// The complete lines printed so far, read off the cooperative pool.
        func lines(atLeast count: Int, timeout: Duration = .seconds(30)) async throws -> [String] {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            let handle = output.fileHandleForReading
            while completeLines.count < count, ContinuousClock.now < deadline {
                // Off the cooperative pool: a detached task blocked in this read held a pool thread,
                // and two such reads stalled every test of the process until the client timed out.
                let chunk = await offPool { handle.availableData }
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return completeLines
        }

        /// A read may end mid-line: only lines with their newline count.
        private var completeLines: [String] {
            text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }

        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    @Test func itReadsTheCurrentVerdictThenEveryChangeInOrder() async throws {
        let harness = MonitorHarness { $0.linkSettleWindow = .zero }
        harness.connect()
        let first = harness.sequence
        try await harness.server().makeApplication().test(.live) { client in
            let port = try #require(client.port)
            let python = try Client(url: "http://127.0.0.1:\(port)/v1/events", count: 3)
            defer { python.stop() }
            let opened = try await python.lines(atLeast: 2)
            #expect(opened.first == "open text/event-stream")
            harness.record(.refused("server"))
            harness.record(.ok("server"))
            let lines = try await python.lines(atLeast: 4)
            #expect(
                lines.dropFirst() == [
                    "\(first) verdict connected healthy False",
                    "\(first + 1) verdict disconnected connection_refused False",
                    "\(first + 2) verdict connected healthy False",
                ]
            )
        }
        await harness.stop()
    }

    @Test func itResumesWithLastEventID() async throws {
        let harness = MonitorHarness { $0.linkSettleWindow = .zero }
        harness.connect()
        let first = harness.sequence
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        try await harness.server().makeApplication().test(.live) { client in
            let port = try #require(client.port)
            let python = try Client(url: "http://127.0.0.1:\(port)/v1/events", count: 2, lastEventID: String(first))
            defer { python.stop() }
            let lines = try await python.lines(atLeast: 3)
            #expect(
                lines.dropFirst() == [
                    "\(first + 1) verdict disconnected connection_refused False",
                    "\(first + 2) verdict connected healthy False",
                ],
                "only what came after the id it had"
            )
        }
        await harness.stop()
    }
}
