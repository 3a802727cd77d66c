import Foundation
import Synchronization

/// A child process whose stdout is collected line by line on a thread of its own, and whose
/// stdin a test can write lines to. Waiting never blocks the cooperative pool.
public final class ChildProcess: Sendable {
    public struct Failed: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    private let process: Process
    private let input: FileHandle
    /// A class, so the reading thread can share the (non-copyable) mutex and atomic.
    private final class Output: Sendable {
        let lines = Mutex<[String]>([])
        let ended = Atomic<Bool>(false)
    }

    private let collected = Output()
    public let name: String

    /// Starts `executable` with `arguments`; stderr goes to `errorLog` (a file path) if given,
    /// else to the test's stderr.
    public init(_ name: String, executable: String, arguments: [String], errorLog: String? = nil, environment: [String: String]? = nil) throws {
        self.name = name
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        if let errorLog {
            _ = FileManager.default.createFile(atPath: errorLog, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: errorLog)
        }
        input = stdin.fileHandleForWriting
        try process.run()
        let output = stdout.fileHandleForReading
        Thread { [collected] in
            var pending = Data()
            while true {
                let chunk = output.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    collected.lines.withLock { $0.append(line) }
                }
            }
            collected.ended.store(true, ordering: .releasing)
        }.start()
    }

    public var processIdentifier: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }
    /// The exit status, once it has exited.
    public var terminationStatus: Int32 { process.terminationStatus }
    public var output: [String] { collected.lines.withLock { $0 } }

    /// Waits until a line of stdout satisfies `predicate`, and returns it.
    @discardableResult
    public func waitForLine(timeout: Duration = .seconds(10), _ predicate: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = collected.lines.withLock({ $0.first(where: predicate) }) { return line }
            if collected.ended.load(ordering: .acquiring), collected.lines.withLock({ $0.first(where: predicate) }) == nil {
                throw Failed(description: "\(name) ended its output without the expected line; it printed \(output)")
            }
            guard ContinuousClock.now < deadline else {
                throw Failed(description: "\(name) did not print the expected line in \(timeout); it printed \(output)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    public func writeLine(_ line: String) throws {
        try input.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Closes stdin: a child that reads to the end then exits.
    public func closeInput() {
        try? input.close()
    }

    public func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits for the child to exit, off the cooperative pool; sends SIGKILL if it takes longer
    /// than `timeout`.
    public func waitForExit(timeout: Duration = .seconds(5)) async {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                signal(SIGKILL)
                break
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        let process = self.process
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                process.waitUntilExit()
                continuation.resume()
            }.start()
        }
    }
}
