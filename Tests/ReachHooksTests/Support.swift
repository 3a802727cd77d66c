import Foundation
import ReachCore
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
    func script(_ name: String, _ body: String, mode: mode_t = 0o755, owner: uid_t? = nil) throws -> String {
        let file = "\(path)/\(name)"
        try ("#!/bin/sh\n" + body + "\n").write(toFile: file, atomically: false, encoding: .utf8)
        #expect(chmod(file, mode) == 0)
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
    private let state = Mutex<(hooks: [(String, HookOutcome, Duration)], webhooks: [(String, WebhookOutcome)], configured: [String])>(([], [], []))

    func reactionsConfigured(hooks: [String], webhooks: [String]) { state.withLock { $0.configured = hooks + webhooks } }
    func hookFinished(_ hook: String, outcome: HookOutcome, duration: Duration) { state.withLock { $0.hooks.append((hook, outcome, duration)) } }
    func webhookFinished(_ webhook: String, outcome: WebhookOutcome) { state.withLock { $0.webhooks.append((webhook, outcome)) } }

    var hooks: [(name: String, outcome: HookOutcome, duration: Duration)] { state.withLock { $0.hooks.map { ($0.0, $0.1, $0.2) } } }
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
func transition(_ direction: TransitionDirection, sequence: UInt64 = 42, interfaces: [String] = ["eth0"]) -> ConnectivityTransition {
    let verdict = Verdict(
        state: direction == .restored ? .connected : .disconnected,
        reason: direction == .restored ? .healthy : .noLink,
        since: WallTime(sinceEpoch: .seconds(1_800_000_000)), usableInterfaces: interfaces)
    return ConnectivityTransition(direction: direction, sequence: sequence, verdict: verdict)
}

/// This process's resident set size, in bytes.
func residentBytes() -> Int {
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? "0 0"
    return (Int(statm.split(separator: " ")[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}
