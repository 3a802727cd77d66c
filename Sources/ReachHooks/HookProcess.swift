import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Subprocess
import Synchronization
import SystemPackage

/// Runs one hook executable: a clean environment, its own process group, output handed over line
/// by line, and a deadline after which the whole group is killed.
///
/// It uses swift-subprocess, which spawns with `posix_spawn` (`POSIX_SPAWN_SETPGROUP` for
/// ``PlatformOptions/processGroupID`` 0, so the hook leads a new group and signals to `-pgid`
/// reach everything it forks), reaps through a pidfd, and stops reading when the hook exits even if
/// a forked child still holds the pipes. Foundation's `Process` is not used in the daemon
/// (swift-corelibs-foundation#5472: it crashes with many open descriptors).
struct HookProcess: Sendable {
    let path: String
    let environment: [String: String]
    let timeout: Duration
    let killGrace: Duration

    enum Stream: String, Sendable {
        case stdout, stderr
    }

    /// How the run ended.
    enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signaled(Int32)
        /// Outlived the timeout: the group got `SIGTERM`, then `SIGKILL` after the grace period.
        case timedOut
        case notStarted(String)
        /// The calling task was cancelled (reachd stopping); the group was torn down.
        case cancelled
    }

    /// Set by the watchdog once it has signalled the group.
    private final class Flag: Sendable {
        private let value = Atomic(false)
        func set() { value.store(true, ordering: .relaxed) }
        var isSet: Bool { value.load(ordering: .relaxed) }
    }

    private enum Finished: Sendable {
        case output
        case watchdog
    }

    /// Runs the hook to its end; `line` gets each output line as it arrives.
    func run(onStart: @escaping @Sendable (Int32) -> Void = { _ in }, line: @escaping @Sendable (Stream, String) -> Void) async -> Ending {
        var options = PlatformOptions()
        options.processGroupID = 0
        // On cancellation (reachd stopping): SIGTERM to the group, SIGKILL to it after the grace.
        options.teardownSequence = [.gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: killGrace)]
        let timedOut = Flag()
        let (timeout, killGrace) = (self.timeout, self.killGrace)
        do {
            // The raw-bytes form is handed to execve as is: each entry must carry its own NUL.
            let variables = environment.map { Array("\($0.key)=\($0.value)\0".utf8) }
            let result = try await Subprocess.run(
                .path(FilePath(path)), arguments: [], environment: .custom(variables),
                workingDirectory: "/", platformOptions: options, input: .none, output: .sequence, error: .sequence
            ) { execution in
                onStart(execution.processIdentifier.value)
                await withTaskGroup(of: Finished.self) { group in
                    group.addTask { await Self.pump(execution.standardOutput, .stdout, line); return .output }
                    group.addTask { await Self.pump(execution.standardError, .stderr, line); return .output }
                    group.addTask {
                        guard (try? await Task.sleep(for: timeout)) != nil else { return .watchdog }
                        timedOut.set()
                        try? execution.send(signal: .terminate, toProcessGroup: true)
                        let pgid = execution.processIdentifier.value
                        let killAt = ContinuousClock.now.advanced(by: killGrace)
                        while ContinuousClock.now < killAt, ProcessGroup.hasLiveMember(pgid) {
                            guard (try? await Task.sleep(for: .milliseconds(50))) != nil else { break }
                        }
                        // Whatever is left of the group, the hook or what it forked, dies now.
                        try? execution.send(signal: .kill, toProcessGroup: true)
                        return .watchdog
                    }
                    var outputs = 0
                    while outputs < 2, let finished = await group.next() {
                        if finished == .output { outputs += 1 }
                    }
                    // Past the deadline, let the watchdog finish the grace and kill any straggler;
                    // otherwise it is no longer needed.
                    if !timedOut.isSet { group.cancelAll() }
                }
            }
            if Task.isCancelled { return .cancelled }
            if timedOut.isSet { return .timedOut }
            switch result.terminationStatus {
            case .exited(let code): return .exited(code)
            case .signaled(let signal): return .signaled(signal)
            }
        } catch {
            if Task.isCancelled { return .cancelled }
            return .notStarted("\(error)")
        }
    }

    private static func pump(_ output: SubprocessOutputSequence, _ stream: Stream, _ line: @Sendable (Stream, String) -> Void) async {
        var lines = OutputLines()
        do {
            for try await buffer in output {
                buffer.withUnsafeBytes { bytes in lines.feed(bytes) { line(stream, $0) } }
            }
        } catch {
            // The hook exited while something it forked still held the pipe, or the run was cancelled.
        }
        lines.finish { line(stream, $0) }
    }
}
