import Foundation
import ReachTesting
import Synchronization

/// A child process a test starts, talks to and waits on: the one wrapper tests use for any
/// program that runs alongside them (reachd, a server, a desktop). Its stdout is collected line
/// by line and its stderr as text, each on a thread of its own, so that neither pipe fills up and
/// waiting never blocks the cooperative pool.
package final class ChildProcess: Sendable {
    package struct Failed: Error, CustomStringConvertible {
        package var description: String
        package init(description: String) { self.description = description }
    }

    /// A class, so the reading threads can share the (non-copyable) mutexes and atomics.
    private final class Collected: Sendable {
        let lines = Mutex<[String]>([])
        let text = Mutex<String>("")
        let errors = Mutex<String>("")
        let outputEnded = Atomic<Bool>(false)
        /// Set once stderr is read to its end (or goes to a file, which the child writes itself).
        let errorsEnded = Atomic<Bool>(false)
    }

    private let process: Process
    private let input: FileHandle
    private let collected = Collected()
    /// Where stderr goes when it is kept in a file (for a person to read after the test).
    private let errorLog: String?
    package let name: String

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - errorLog: A file for stderr, kept after the test; else stderr is collected in memory.
    ///   - environment: The whole environment; `nil` inherits the test's.
    ///   - directory: The working directory; `nil` inherits the test's.
    package init(
        _ name: String,
        executable: String,
        arguments: [String],
        errorLog: String? = nil,
        environment: [String: String]? = nil,
        directory: String? = nil
    ) throws {
        self.name = name
        self.errorLog = errorLog
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = URL(filePath: directory) }
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = errorLog == nil ? Pipe() : nil
        process.standardInput = stdin
        process.standardOutput = stdout
        if let errorLog {
            _ = FileManager.default.createFile(atPath: errorLog, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: errorLog)
        } else {
            process.standardError = stderr
        }
        input = stdin.fileHandleForWriting
        try process.run()
        let collected = collected
        Self.read(stdout.fileHandleForReading) { chunk, pending in
            collected.text.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                collected.lines.withLock { $0.append(line) }
            }
        } ended: { pending in
            if !pending.isEmpty { collected.lines.withLock { $0.append(String(decoding: pending, as: UTF8.self)) } }
            collected.outputEnded.store(true, ordering: .releasing)
        }
        if let stderr {
            Self.read(stderr.fileHandleForReading) { chunk, _ in
                collected.errors.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
            } ended: { _ in
                collected.errorsEnded.store(true, ordering: .releasing)
            }
        }
    }

    /// Reads `handle` to its end on a thread of its own.
    private static func read(
        _ handle: FileHandle,
        chunk: @escaping @Sendable (Data, inout Data) -> Void,
        ended: @escaping @Sendable (Data) -> Void
    ) {
        Thread {
            var pending = Data()
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                chunk(data, &pending)
            }
            ended(pending)
        }.start()
    }

    package var processIdentifier: Int32 { process.processIdentifier }
    package var isRunning: Bool { process.isRunning }
    /// The exit status, once it has exited.
    package var terminationStatus: Int32 { process.terminationStatus }
    /// Whether it ended by a signal rather than an exit.
    package var wasSignalled: Bool { process.terminationReason == .uncaughtSignal }
    /// The lines of stdout so far.
    package var output: [String] { collected.lines.withLock { $0 } }
    /// stdout so far, as it came.
    package var outputText: String { collected.text.withLock { $0 } }
    /// stderr so far.
    package var errors: String {
        guard let errorLog else { return collected.errors.withLock { $0 } }
        return FileManager.default.contents(atPath: errorLog).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Waits until a line of stdout satisfies `predicate`, and returns it.
    @discardableResult
    package func waitForLine(timeout: Duration = .seconds(10), _ predicate: (String) -> Bool) async throws -> String {
        let collected = collected
        do {
            return try await waitFor("\(name) to print the expected line", timeout: timeout) {
                let ended = collected.outputEnded.load(ordering: .acquiring)
                if let line = collected.lines.withLock({ $0.first(where: predicate) }) { return line }
                if ended {
                    throw Failed(
                        description: "\(name) ended its output without the expected line; it printed \(output)"
                    )
                }
                return nil
            }
        } catch is TimedOutWaiting {
            throw Failed(description: "\(name) did not print the expected line in \(timeout); it printed \(output)")
        }
    }

    /// Waits until stderr contains `text`, and returns all of stderr so far.
    @discardableResult
    package func waitForErrors(containing text: String, timeout: Duration = .seconds(20)) async throws -> String {
        let collected = collected
        do {
            return try await waitFor("\(name) to write \(text)", timeout: timeout) {
                let finished = !isRunning && (errorLog != nil || collected.errorsEnded.load(ordering: .acquiring))
                let errors = errors
                if errors.contains(text) { return errors }
                if finished {
                    throw Failed(description: "\(name) exited without writing \"\(text)\"; it wrote:\n\(errors)")
                }
                return nil
            }
        } catch is TimedOutWaiting {
            throw Failed(description: "\(name) did not write \"\(text)\" in \(timeout); it wrote:\n\(errors)")
        }
    }

    package func writeLine(_ line: String) throws {
        try input.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Closes stdin: a child that reads to the end then exits.
    package func closeInput() {
        try? input.close()
    }

    package func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits for the child to exit, and returns how long that took; sends SIGKILL if it takes
    /// longer than `timeout`.
    @discardableResult
    package func waitForExit(timeout: Duration = .seconds(5)) async -> Duration {
        let start = ContinuousClock.now
        if (try? await waitUntil("\(name) to exit", timeout: timeout) { !self.isRunning }) == nil { signal(SIGKILL) }
        let took = ContinuousClock.now - start
        let process = self.process
        await offPool { process.waitUntilExit() }
        return took
    }

    /// Waits for the exit (SIGKILL after `timeout`, which the result's status then shows) and the
    /// end of its stdout; returns its status and everything it wrote.
    package func finish(timeout: Duration = .seconds(15)) async -> ProgramResult {
        await waitForExit(timeout: timeout)
        let collected = collected
        let errorsInFile = errorLog != nil
        try? await waitUntil("\(name)'s output to end", timeout: .seconds(5)) {
            collected.outputEnded.load(ordering: .acquiring)
                && (errorsInFile || collected.errorsEnded.load(ordering: .acquiring))
        }
        return ProgramResult(status: process.terminationStatus, output: collected.text.withLock { $0 }, errors: errors)
    }

    /// Kills it and waits until it is gone: for a test that is done with it.
    package func stop() async {
        signal(SIGKILL)
        await waitForExit()
    }
}
