import Foundation
import Testing

/// A child process with both outputs captured; killed with SIGKILL when the test is done with it.
final class Child: @unchecked Sendable {
    enum Stream { case output, errors }

    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private var outputSeen = ""
    private var errorsSeen = ""

    init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], discardStderr: Bool = false) throws {
        process.executableURL = executable
        process.arguments = arguments
        var base = ProcessInfo.processInfo.environment
        base["REACHD_ENDPOINT"] = nil
        process.environment = base.merging(environment) { _, new in new }
        process.standardOutput = output
        process.standardError = discardStderr ? FileHandle.nullDevice : errors
        try process.run()
    }

    private var name: String { process.executableURL?.lastPathComponent ?? "?" }

    /// Reads `stream` until it contains `text`; returns all of it so far.
    func waitFor(_ text: String, on stream: Stream, timeout: Duration = .seconds(20)) async throws -> String {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let handle = (stream == .output ? output : errors).fileHandleForReading
        var seen = stream == .output ? outputSeen : errorsSeen
        defer { if stream == .output { outputSeen = seen } else { errorsSeen = seen } }
        while !seen.contains(text) {
            guard ContinuousClock.now < deadline, process.isRunning else {
                Issue.record("\(name) never wrote \"\(text)\"; it wrote:\n\(seen)")
                return seen
            }
            seen += String(decoding: handle.availableData, as: UTF8.self)
        }
        return seen
    }

    /// Waits for the exit (SIGKILL after `timeout`) and returns everything it wrote.
    func finish(timeout: Duration = .seconds(15)) async throws -> (status: Int32, stdout: String, stderr: String) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning {
            if ContinuousClock.now > deadline {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("\(name) \(process.arguments ?? []) did not exit within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        let stdout = outputSeen + String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = errorsSeen + String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, stdout, stderr)
    }

    func killNow() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
