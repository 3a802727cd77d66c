import Foundation
import ReachLogging
import ReachTesting
import Synchronization

/// A command running beside a `systemd-journald` of the test's own, in a private mount namespace:
/// tmpfs over the journal's sockets, files and catalog database, so tests run in parallel, never
/// touch a journald they did not start, and may stop, freeze or restart theirs.
package final class PrivateJournal: Sendable {
    private let child: ChildProcess
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
    private static let closeAndRun =
        #"for fd in $(ls /proc/$BASHPID/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null; exec "$@""#

    /// The command's pid, which is also a way into its mount namespace (`nsenter -t`).
    package var pid: pid_t { child.processIdentifier }
    package var journaldPID: pid_t { journald.withLock { $0 } }

    package init(
        _ command: String,
        _ arguments: [String],
        journald: Bool = true,
        markJournalStream: Bool = false,
        environment: [String: String] = [:]
    ) async throws {
        var base = ProcessInfo.processInfo.environment
        base["JOURNAL_STREAM"] = nil
        base["CLOSE_AND_RUN"] = Self.closeAndRun
        base["START_JOURNALD"] = journald ? "1" : "0"
        base["MARK_JOURNAL_STREAM"] = markJournalStream ? "1" : "0"
        child = try ChildProcess(
            (command as NSString).lastPathComponent,
            executable: "/usr/bin/unshare",
            arguments: ["--mount", "--propagation", "private", "/bin/bash", "-c", Self.script, "bash", command]
                + arguments,
            environment: base.merging(environment) { _, new in new }
        )
        let child = child
        let pid = try await waitFor("the script to say journald's pid") { () -> pid_t? in
            let errors = child.errors
            guard let start = errors.range(of: "journald ") else { return nil }
            let rest = errors[start.upperBound...]
            guard let newline = rest.firstIndex(of: "\n") else { return nil }
            return pid_t(rest[..<newline]) ?? 0
        }
        self.journald.withLock { $0 = pid }
    }

    /// reachd, started the one way (``ReachdProcess/command(_:listen:logTarget:namespace:)``),
    /// logging to this journal.
    package static func reachd(
        _ arguments: [String],
        listen: String? = "127.0.0.1:0",
        namespace: TestNamespace? = nil
    ) async throws -> PrivateJournal {
        let command = ReachdProcess.command(arguments, listen: listen, logTarget: "journald", namespace: namespace)
        return try await PrivateJournal(command.executable, command.arguments)
    }

    deinit {
        child.signal(SIGKILL)
        let journaldPID = journald.withLock { $0 }
        if journaldPID > 0 {
            kill(journaldPID, SIGCONT)
            kill(journaldPID, SIGKILL)
        }
    }

    package var standardOutput: String { child.outputText }
    package var standardError: String { child.errors }

    package func send(_ line: String) {
        try? child.writeLine(line)
    }

    package func closeInput() {
        child.closeInput()
    }

    @discardableResult
    package func waitForOutput(_ text: String, timeout: Duration = .seconds(20)) async throws -> String {
        let child = child
        return try await waitFor("the command to print \(text)", timeout: timeout) {
            child.outputText.contains(text) ? child.outputText : nil
        }
    }

    @discardableResult
    package func waitForErrors(_ text: String, timeout: Duration = .seconds(20)) async throws -> String {
        try await child.waitForErrors(containing: text, timeout: timeout)
    }

    /// Waits for the command to exit (SIGKILL after `timeout`) and its output to end; its exit status.
    package func finish(timeout: Duration = .seconds(15)) async -> Int32 {
        await child.finish(timeout: timeout).status
    }

    /// Runs a command inside the namespace (while journald or the command runs); its standard output.
    @discardableResult
    package func inside(
        _ arguments: [String],
        through process: pid_t? = nil
    ) async throws -> (status: Int32, output: String) {
        // journald outlives the command, so the namespace stays reachable through it.
        let member = process ?? (journaldPID > 0 ? journaldPID : pid)
        let result = try await runProgram("/usr/bin/nsenter", ["-t", "\(member)", "-m", "--"] + arguments)
        return (result.status, result.output)
    }

    /// Installs `systemd/reachd.catalog` as `scripts/install` does, into a tmpfs over the system
    /// catalog directory that only this namespace sees, so that `journalctl -x` explains reachd's entries.
    package func installCatalog() async throws {
        let catalog = BuiltProducts.packageRoot.appending(path: "systemd/reachd.catalog").path
        let install = try await inside([
            "/bin/sh", "-c",
            "mount -t tmpfs tmpfs /usr/lib/systemd/catalog && cp '\(catalog)' /usr/lib/systemd/catalog/ && journalctl --update-catalog && echo installed",
        ])
        guard install.output.contains("installed") else {
            throw ChildProcess.Failed(description: "the catalog was not installed: \(install)")
        }
    }

    /// The journal's entries matching `matches` (`FIELD=value`), fields decoded to strings.
    package func entries(_ matches: [String]) async throws -> [[String: String]] {
        let (_, text) = try await inside(["/usr/bin/journalctl", "--no-pager", "-o", "json"] + matches)
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return nil
            }
            return object.compactMapValues(Self.fieldText)
        }
    }

    /// Waits until `count` entries match.
    package func waitForEntries(
        _ matches: [String],
        count: Int,
        timeout: Duration = .seconds(20)
    ) async throws -> [[String: String]] {
        var found: [[String: String]] = []
        do {
            try await waitUntil("\(count) journal entries for \(matches)", timeout: timeout) {
                found = try await self.entries(matches)
                return found.count >= count
            }
        } catch is TimedOutWaiting {
            throw MissingEntries(
                description: "only \(found.count) of \(count) entries for \(matches); stderr:\n\(standardError)"
            )
        }
        return found
    }

    /// Fewer entries than awaited came: a rig imports no Testing (it is built with the release
    /// products, which have no Testing module), so the test fails with this error instead.
    struct MissingEntries: Error, CustomStringConvertible {
        let description: String
    }

    /// Stops the test's journald (SIGTERM) and waits until it is gone.
    package func stopJournald() async throws {
        let pid = journaldPID
        kill(pid, SIGTERM)
        // Not the test's child (the command inherited it): gone means a zombie or no process.
        try await waitUntil("journald \(pid) to stop") {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            return stat.contains(") Z ")
        }
    }

    /// Starts a new journald in the namespace and waits for its socket.
    package func restartJournald() async throws {
        // Detached (setsid -f): a long-lived child of the test process would confuse Foundation's
        // reaping of the command. It prints its pid, then becomes journald.
        let (_, announced) = try await inside(
            [
                "/usr/bin/setsid", "-f", "/bin/bash", "-c",
                "echo $$; exec </dev/null >/dev/null 2>&1; " + Self.closeAndRun,
                "bash", "/lib/systemd/systemd-journald",
            ],
            through: pid
        )
        journald.withLock { $0 = pid_t(announced.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 }
        // The stopped journald left its socket file: wait until one answers on it.
        let socket = "/proc/\(pid)/root\(JournalAvailability.socketPath)"
        try await waitUntil("the new journald to answer on its socket") {
            JournalAvailability.socketAnswers(path: socket)
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
