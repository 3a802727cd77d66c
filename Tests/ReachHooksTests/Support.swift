import Foundation
import Glibc
import ReachCore
import ReachSupport
import ReachTestRigs
import ReachTesting
import Synchronization
import Testing

/// A temporary hook directory (mode 0755) that tests fill with scripts; removed with the folder.
struct HookFolder {
    private let directory: TemporaryDirectory
    var path: String { directory.path }

    init() throws {
        directory = try TemporaryDirectory("hooks")
    }

    /// Writes a `/bin/sh` script and sets its exact mode (no umask) and, when given, its owner.
    @discardableResult
    func script(_ name: String, _ body: String, mode: mode_t = 0o755, owner: uid_t? = nil) async throws -> String {
        let file = "\(path)/\(name)"
        try await writeExecutable("#!/bin/sh\n" + body + "\n", to: file, mode: mode)
        if let owner { #expect(chown(file, owner, gid_t.max) == 0) }
        return file
    }

    func contents(_ name: String) -> String? {
        try? String(contentsOfFile: "\(path)/\(name)", encoding: .utf8)
    }

    func lines(_ name: String) -> [String] {
        contents(name)?.split(separator: "\n").map(String.init) ?? []
    }

    /// Removes the directory while the test still runs: a hook directory that went away.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// What the metrics would have seen.
final class RecordingObserver: ReactionObserver {
    private let state = Mutex<
        (hooks: [(String, HookOutcome, Duration)], webhooks: [(String, WebhookOutcome)], configured: [String])
    >(([], [], []))

    func reactionsConfigured(hooks: [String], webhooks: [String]) {
        state.withLock { $0.configured = hooks + webhooks }
    }
    func hookFinished(_ hook: String, outcome: HookOutcome, duration: Duration) {
        state.withLock { $0.hooks.append((hook, outcome, duration)) }
    }
    func webhookFinished(_ webhook: String, outcome: WebhookOutcome) {
        state.withLock { $0.webhooks.append((webhook, outcome)) }
    }

    var hooks: [(name: String, outcome: HookOutcome, duration: Duration)] {
        state.withLock { $0.hooks.map { ($0.0, $0.1, $0.2) } }
    }
    var webhooks: [(name: String, outcome: WebhookOutcome)] { state.withLock { $0.webhooks.map { ($0.0, $0.1) } } }
    var configured: [String] { state.withLock { $0.configured } }
}

/// Whether a process is gone: no /proc entry, or a zombie nobody reaped (PID 1 in a container may not).
func processIsGone(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
    guard let close = stat.lastIndex(of: ")") else { return false }
    return stat[stat.index(close, offsetBy: 2)] == "Z"
}

/// A transition as the monitor makes them.
func transition(
    _ direction: TransitionDirection,
    sequence: UInt64 = 42,
    interfaces: [String] = ["eth0"]
) -> ConnectivityTransition {
    let verdict = Verdict(
        state: direction == .restored ? .connected : .disconnected,
        reason: direction == .restored ? .healthy : .noLink,
        since: WallTime(sinceEpoch: .seconds(1_800_000_000)),
        usableInterfaces: interfaces
    )
    return ConnectivityTransition(direction: direction, sequence: sequence, verdict: verdict)
}

/// This process's resident set size, in bytes.
func residentBytes() -> Int {
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? "0 0"
    return (Int(statm.split(separator: " ")[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Tells when a file is opened (inotify `IN_OPEN`): an exec attempt opens the file, and the kernel
/// reports it even when the exec then fails with `ETXTBSY`.
final class OpenWatch: Sendable {
    struct Failed: Error {
        let errno: Int32
    }

    private let descriptor: Int32

    init(_ path: String) throws {
        descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { throw Failed(errno: errno) }
        guard inotify_add_watch(descriptor, path, UInt32(IN_OPEN)) >= 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw Failed(errno: code)
        }
    }

    /// Waits (off the pool) until the file is opened, or `timeout` passes; whether it was.
    func nextOpen(timeout: Duration) async -> Bool {
        let milliseconds = Int32(timeout / .milliseconds(1))
        return await offPool {
            var entry = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, milliseconds) > 0 else { return false }
            var buffer = [UInt8](repeating: 0, count: 4096)
            return read(self.descriptor, &buffer, buffer.count) > 0
        }
    }

    deinit { Glibc.close(descriptor) }
}
