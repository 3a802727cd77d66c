import Foundation
import ReachLogging
import ReachTesting
import Synchronization
import Testing

/// A command running beside a `systemd-journald` of the test's own, in a private mount namespace:
/// tmpfs over the journal's sockets, files and catalog database, so tests run in parallel, never
/// touch a journald they did not start, and may stop, freeze or restart theirs.
final class PrivateJournal: Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    /// What a pipe delivered so far.
    private final class Seen: Sendable {
        let text = Mutex("")
        func append(_ data: Data) { text.withLock { $0 += String(decoding: data, as: UTF8.self) } }
        var all: String { text.withLock { $0 } }
    }

    private let seenOutput = Seen()
    private let seenErrors = Seen()
    private let journald = Mutex<pid_t>(0)

    /// Mounts, starts journald (unless `journald` is false), waits for its socket, then becomes the command.
    private static let script = #"""
        set -e
        for d in /run/systemd/journal /run/log /var/log/journal /var/lib/systemd/catalog; do mkdir -p "$d"; mount -t tmpfs tmpfs "$d"; done
        if [ "$START_JOURNALD" = 1 ]; then
            # Without the descriptors the test process leaked into the command (the test would
            # otherwise wait for journald too).
            /bin/bash -c "$CLOSE_AND_RUN" bash /lib/systemd/systemd-journald </dev/null >/dev/null 2>&1 &
            echo "journald $!" >&2
            for i in $(seq 400); do [ -S /run/systemd/journal/socket ] && break; sleep 0.025; done
        else
            echo "journald 0" >&2
        fi
        if [ "$MARK_JOURNAL_STREAM" = 1 ]; then export JOURNAL_STREAM=$(stat -L -c '%d:%i' /proc/self/fd/2); fi
        exec "$@"
        """#

    /// Closes every descriptor but the standard three, then becomes `$@`.
    private static let closeAndRun = #"for fd in $(ls /proc/$BASHPID/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null; exec "$@""#

    /// The command's pid, which is also a way into its mount namespace (`nsenter -t`).
    var pid: pid_t { process.processIdentifier }
    var journaldPID: pid_t { journald.withLock { $0 } }

    init(_ command: URL, _ arguments: [String], journald: Bool = true, markJournalStream: Bool = false, environment: [String: String] = [:]) async throws {
        process.executableURL = URL(filePath: "/usr/bin/unshare")
        process.arguments = ["--mount", "--propagation", "private", "/bin/bash", "-c", Self.script, "bash", command.path] + arguments
        var base = ProcessInfo.processInfo.environment
        base["JOURNAL_STREAM"] = nil
        base["CLOSE_AND_RUN"] = Self.closeAndRun
        base["START_JOURNALD"] = journald ? "1" : "0"
        base["MARK_JOURNAL_STREAM"] = markJournalStream ? "1" : "0"
        process.environment = base.merging(environment) { _, new in new }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        let seenOutput = seenOutput, seenErrors = seenErrors
        output.fileHandleForReading.readabilityHandler = { handle in
            seenOutput.append(handle.availableData)
        }
        errors.fileHandleForReading.readabilityHandler = { handle in
            seenErrors.append(handle.availableData)
        }
        try process.run()
        let announced = try await waitFor("\n", in: seenErrors, after: "journald ")
        let line = announced.split(separator: "\n").first { $0.hasPrefix("journald ") } ?? ""
        self.journald.withLock { $0 = pid_t(line.dropFirst("journald ".count)) ?? 0 }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        let journaldPID = journald.withLock { $0 }
        if journaldPID > 0 { kill(journaldPID, SIGCONT); kill(journaldPID, SIGKILL) }
    }

    var standardOutput: String { seenOutput.all }
    var standardError: String { seenErrors.all }

    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    func waitForOutput(_ text: String, timeout: Duration = .seconds(20)) async throws -> String {
        try await waitFor(text, in: seenOutput, timeout: timeout)
    }

    func waitForErrors(_ text: String, timeout: Duration = .seconds(20)) async throws -> String {
        try await waitFor(text, in: seenErrors, timeout: timeout)
    }

    private func waitFor(_ text: String, in buffer: Seen, after marker: String = "", timeout: Duration = .seconds(20)) async throws -> String {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let seen = buffer.all
            let tail = marker.isEmpty ? Substring(seen) : seen.range(of: marker).map { seen[$0.upperBound...] }
            if let tail, tail.contains(text) { return seen }
            guard ContinuousClock.now < deadline else {
                Issue.record("never saw \"\(text)\"; stdout:\n\(standardOutput)\nstderr:\n\(standardError)")
                return seen
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits for the command to exit (SIGKILL after `timeout`); its exit status.
    func finish(timeout: Duration = .seconds(15)) async throws -> Int32 {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning {
            if ContinuousClock.now > deadline {
                Issue.record("the command did not exit within \(timeout)")
                kill(process.processIdentifier, SIGKILL)
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(50))  // the last output
        return process.terminationStatus
    }

    /// Runs a command inside the namespace (while journald or the command runs); its standard output.
    @discardableResult
    func inside(_ arguments: [String], through process: pid_t? = nil) async throws -> (status: Int32, output: String) {
        // journald outlives the command, so the namespace stays reachable through it.
        let member = process ?? (journaldPID > 0 ? journaldPID : pid)
        let result = try await runProgram("/usr/bin/nsenter", ["-t", "\(member)", "-m", "--"] + arguments)
        return (result.status, result.output)
    }

    /// The journal's entries matching `matches` (`FIELD=value`), fields decoded to strings.
    func entries(_ matches: [String]) async throws -> [[String: String]] {
        let (_, text) = try await inside(["/usr/bin/journalctl", "--no-pager", "-o", "json"] + matches)
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return object.compactMapValues(Self.fieldText)
        }
    }

    /// Polls the journal until `count` entries match.
    func waitForEntries(_ matches: [String], count: Int, timeout: Duration = .seconds(20)) async throws -> [[String: String]] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let found = try await entries(matches)
            if found.count >= count { return found }
            guard ContinuousClock.now < deadline else {
                Issue.record("only \(found.count) of \(count) entries for \(matches); stderr:\n\(standardError)")
                return found
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Stops the test's journald (SIGTERM) and waits until it is gone.
    func stopJournald() async throws {
        let pid = journaldPID
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        // Not the test's child (the command inherited it): gone means a zombie or no process.
        while let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), !stat.contains(") Z "), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Starts a new journald in the namespace and waits for its socket.
    func restartJournald() async throws {
        // Detached (setsid -f): a long-lived child of the test process would confuse Foundation's
        // reaping of the command. It prints its pid, then becomes journald.
        let (_, announced) = try await inside([
            "/usr/bin/setsid", "-f", "/bin/bash", "-c", "echo $$; exec </dev/null >/dev/null 2>&1; " + Self.closeAndRun,
            "bash", "/lib/systemd/systemd-journald",
        ], through: pid)
        journald.withLock { $0 = pid_t(announced.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 }
        // The stopped journald left its socket file: wait until one answers on it.
        let socket = "/proc/\(pid)/root\(JournalAvailability.socketPath)"
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while !JournalAvailability.socketAnswers(path: socket), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private static func fieldText(_ value: Any) -> String? {
        switch value {
        case let string as String: string
        // Non-printable values come as byte arrays; repeated fields as arrays of values.
        case let bytes as [Int]: String(decoding: bytes.map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self)
        case let many as [Any]: many.compactMap(fieldText).joined(separator: "\u{1F}")
        default: nil
        }
    }
}

/// Executables built next to the test bundle.
let journalLogHelper = reachdBinary.deletingLastPathComponent().appending(path: "journal-log-helper")

/// The source tree, for files the tests install (the journal catalog, the units).
let repositoryRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
