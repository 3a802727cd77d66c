import Foundation
import Hummingbird
import HummingbirdTesting
import ReachCore
import ReachServer
import ReachTesting
import Testing

/// Schemathesis (https://schemathesis.io) fuzzes a live server from `openapi.yaml` and checks that
/// no answer is a 5xx and every status, content type and body is the one the document describes.
/// `GET /v1/events` is left out: the stream never ends, so no response would ever be complete.
///
/// Needs `python3`; installs schemathesis with pip when it is missing (scripts/test does it ahead).
@Suite("Status API: schemathesis against openapi.yaml", .serialized)
struct SchemathesisTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `python3 ARGS`; its exit status and everything it printed.
    static func python(
        _ arguments: [String],
        timeout: Duration = .seconds(600)
    ) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        // Schemathesis and Hypothesis keep caches (.schemathesis/, .hypothesis/) in the working
        // directory: not in the repository, and not kept from one run to the next (the seed is fixed).
        let directory = try TemporaryDirectory("schemathesis")
        process.currentDirectoryURL = directory.url
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment["SCHEMATHESIS_TELEMETRY"] = "false"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let handle = output.fileHandleForReading
        let reader = Task { await offPool { handle.readDataToEndOfFile() } }
        do {
            try await waitUntil("python3 \(arguments.joined(separator: " ")) to exit", timeout: timeout) {
                !process.isRunning
            }
        } catch is TimedOutWaiting {
            process.terminate()
        }
        let printed = await reader.value
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: printed, as: UTF8.self))
    }

    static func ensureSchemathesis() async throws -> Bool {
        if try await python(["-m", "schemathesis.cli", "--version"]).status == 0 { return true }
        _ = try await python(["-m", "pip", "install", "--quiet", "schemathesis"])
        return try await python(["-m", "schemathesis.cli", "--version"]).status == 0
    }

    @Test(arguments: [nil, "s3cret-token"])
    func theLiveServerConformsToItsDocument(token: String?) async throws {
        let installed = try await Self.ensureSchemathesis()
        try #require(installed, "schemathesis is not installed and pip could not install it")
        let harness = MonitorHarness()
        harness.connect()
        let server = harness.server(token: token, checkWaitLimit: .milliseconds(50))
        try await server.makeApplication().test(.live) { client in
            let port = try #require(client.port)
            var arguments = [
                "-m", "schemathesis.cli", "run", Self.root.appendingPathComponent("Sources/ReachAPI/openapi.yaml").path,
                "--url", "http://127.0.0.1:\(port)",
                "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
                "--exclude-operation-id", "streamEvents",
                "--max-examples", "50", "--seed", "20270115", "--request-timeout", "10", "--no-color",
            ]
            if let token { arguments += ["--header", "Authorization: Bearer \(token)"] }
            let (status, output) = try await Self.python(arguments)
            #expect(status == 0, "schemathesis found problems:\n\(output)")
            #expect(output.contains("Test cases:"), "schemathesis did not run:\n\(output)")
            let summary = output.split(separator: "\n").filter { $0.contains("generated") || $0.contains("Tested:") }
            print(
                "schemathesis (token: \(token == nil ? "none" : "set")): \(summary.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "; "))"
            )
        }
        await harness.stop()
    }
}
