import ReachCore
import ReachPOSIX
import ReachSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs one hook executable: a clean environment, its own process group, output handed over line
/// by line, and a deadline after which the whole group is killed.
///
/// A ``ReachPOSIX/SpawnedProcess``: the hook leads a new process group, so signals to `-pgid` reach
/// everything it forks; it is reaped through a pidfd, and its output is read only until it exits,
/// even if a forked child still holds the pipes. Foundation's `Process` is not used in the daemon
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

    /// Runs the hook to its end; `line` gets each output line as it arrives.
    ///
    /// A spawn that fails with `ETXTBSY` is tried again a few times, 20 ms apart: the executable is
    /// still open for writing somewhere, typically an editor or deploy tool that is saving it, or a
    /// process that forked while it held such a descriptor and has not yet reached `exec`.
    func run(
        onStart: @escaping @Sendable (Int32) -> Void = { _ in },
        line: @escaping @Sendable (Stream, String) -> Void
    ) async -> Ending {
        // Each entry is `NAME=value`, as execve takes them.
        let variables = environment.map { "\($0.key)=\($0.value)" }
        var attempt = 0
        while true {
            attempt += 1
            do throws(SystemCallError) {
                let process = try SpawnedProcess.start(
                    path,
                    arguments: [path],
                    environment: variables,
                    directory: "/",
                    capturingOutput: true
                )
                onStart(process.pid)
                return await watch(process, line: line)
            } catch {
                if Task.isCancelled { return .cancelled }
                guard error.code == ETXTBSY, attempt <= Self.busyRetries,
                    (try? await Task.sleep(for: .milliseconds(20))) != nil
                else {
                    return .notStarted(error.reason)
                }
            }
        }
    }

    private static let busyRetries = 5

    /// Reads the hook's output until it exits; past the timeout, or when reachd stops (the calling
    /// task is cancelled), its group is torn down first.
    private func watch(_ process: SpawnedProcess, line: @escaping @Sendable (Stream, String) -> Void) async -> Ending {
        let lines = Mutex((stdout: OutputLines(), stderr: OutputLines()))
        let ended = Task {
            let termination = await process.ended { stream, bytes in
                lines.withLock { lines in
                    switch stream {
                    case .output: lines.stdout.feed(bytes) { line(.stdout, $0) }
                    case .errors: lines.stderr.feed(bytes) { line(.stderr, $0) }
                    }
                }
            }
            lines.withLock { lines in
                lines.stdout.finish { line(.stdout, $0) }
                lines.stderr.finish { line(.stderr, $0) }
            }
            return termination
        }
        let (pgid, killGrace) = (process.pid, self.killGrace)
        switch await ended.value(within: timeout) {
        case .finished(.exited(let code)):
            return .exited(code)
        case .finished(.signaled(let signal)):
            return .signaled(signal)
        case .expired:
            await Self.stop(group: pgid, grace: killGrace)
            _ = await ended.value
            return Task.isCancelled ? .cancelled : .timedOut
        case .cancelled:
            // reachd stops: the group gets its grace period all the same (a task of its own, which
            // the caller's cancellation does not cut short).
            await Task { await Self.stop(group: pgid, grace: killGrace) }.value
            _ = await ended.value
            return .cancelled
        }
    }

    /// `SIGTERM` to the group, then, after the grace period or as soon as the calling task is
    /// cancelled, `SIGKILL` to whatever is left of it, the hook or what it forked.
    private static func stop(group pgid: Int32, grace: Duration) async {
        kill(-pgid, SIGTERM)
        let killAt = ContinuousClock.now.advanced(by: grace)
        while ContinuousClock.now < killAt, ProcessGroup.hasLiveMember(pgid) {
            guard (try? await Task.sleep(for: .milliseconds(50))) != nil else { break }
        }
        kill(-pgid, SIGKILL)
    }
}
