import Foundation
import ReachTesting
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `Clients/health_client.py` running as a child process: grpcio's generated `HealthStub`, a
/// health client nobody here wrote, printing each answer as a line.
///
/// Output is read without blocking a thread (a readability handler), so a test can wait for
/// lines while the server it talks to runs on the same small pool.
final class HealthClientProcess: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case pythonPackagesMissing
        case timedOut(waitingFor: String, lines: [String])

        var description: String {
            switch self {
            case .pythonPackagesMissing: "python3 cannot import grpc_health even after pip install grpcio grpcio-health-checking"
            case .timedOut(let condition, let lines): "timed out waiting for \(condition); lines so far: \(lines)"
            }
        }
    }

    private let process: Process
    private let output: LineCollector

    /// Starts `health_client.py PORT arguments...` against 127.0.0.1.
    convenience init(port: Int, _ arguments: String...) throws {
        try self.init(port: port, arguments: arguments)
    }

    /// - Parameter token: Sent as `authorization: Bearer <token>` metadata on every call.
    init(port: Int, arguments: [String], token: String? = nil) throws {
        guard Self.pythonReady else { throw Failure.pythonPackagesMissing }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Clients/health_client.py")
        let stdout = Pipe()
        let output = LineCollector()
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, String(port)] + arguments
        if let token { process.environment = ProcessInfo.processInfo.environment.merging(["HEALTH_TOKEN": token]) { $1 } }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout
        stdout.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                output.finish()
            } else {
                output.append(data)
            }
        }
        self.output = output
        try process.run()
    }

    /// The complete lines printed so far.
    var lines: [String] { output.lines }

    /// Waits until at least `count` lines were printed and returns them all.
    @discardableResult
    func lines(atLeast count: Int, within limit: Duration = .seconds(15)) async throws -> [String] {
        try await waitFor("\(count) lines", within: limit) { output.lines.count >= count }
        return output.lines
    }

    /// Waits until the client closed its output (it exits right after) and returns every line.
    func allLines(within limit: Duration = .seconds(15)) async throws -> [String] {
        try await waitFor("the end of output", within: limit) { output.isFinished }
        return output.lines
    }

    /// Waits until the process has exited.
    func waitForExit(within limit: Duration = .seconds(15)) async throws {
        try await waitFor("the client to exit", within: limit) { !process.isRunning }
    }

    private func waitFor(_ condition: String, within limit: Duration, _ check: () -> Bool) async throws {
        do {
            try await waitUntil(condition, timeout: limit) { check() }
        } catch is TimedOutWaiting {
            throw Failure.timedOut(waitingFor: condition, lines: output.lines)
        }
    }

    /// SIGKILL (a test runner's children may have SIGTERM blocked) and reap.
    func kill() {
        if process.isRunning {
            _ = Glibc.kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }

    deinit { kill() }

    /// Runs one command to completion and returns its lines, killing the client on failure.
    static func run(port: Int, token: String? = nil, _ arguments: String...) async throws -> [String] {
        let client = try HealthClientProcess(port: port, arguments: arguments, token: token)
        defer { client.kill() }
        return try await client.allLines()
    }

    /// Whether `python3` (pyenv's, from PATH) can import `grpc_health`; installs grpcio and
    /// grpcio-health-checking with pip the first time it cannot. Evaluated once per test run.
    static let pythonReady = PythonModules.importable("grpc_health", installing: ["grpcio", "grpcio-health-checking"])
}

/// Bytes from a child's stdout, split into lines.
private final class LineCollector: Sendable {
    private struct State {
        var pending = Data()
        var lines: [String] = []
        var finished = false
    }

    private let state = Mutex(State())

    func append(_ data: Data) {
        state.withLock { state in
            state.pending.append(data)
            while let newline = state.pending.firstIndex(of: UInt8(ascii: "\n")) {
                state.lines.append(String(decoding: state.pending[state.pending.startIndex..<newline], as: UTF8.self))
                state.pending = Data(state.pending[state.pending.index(after: newline)...])
            }
        }
    }

    func finish() {
        state.withLock { $0.finished = true }
    }

    var lines: [String] { state.withLock { $0.lines } }
    var isFinished: Bool { state.withLock { $0.finished } }
}
