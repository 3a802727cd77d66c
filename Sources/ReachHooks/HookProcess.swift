import FoundationEssentials
import ReachCore
import ReachSupport
import Subprocess
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

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

    /// Runs the hook to its end; `line` gets each output line as it arrives.
    ///
    /// A spawn that fails with `ETXTBSY` is tried again a few times, 20 ms apart: the executable is
    /// still open for writing somewhere, typically an editor or deploy tool that is saving it, or a
    /// process that forked while it held such a descriptor and has not yet reached `exec`.
    func run(
        onStart: @escaping @Sendable (Int32) -> Void = { _ in },
        line: @escaping @Sendable (Stream, String) -> Void
    ) async -> Ending {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await runOnce(onStart: onStart, line: line)
            } catch {
                if Task.isCancelled { return .cancelled }
                let busy = (error as? SubprocessError)?.underlyingError == .textFileBusy
                guard busy, attempt <= Self.busyRetries, (try? await Task.sleep(for: .milliseconds(20))) != nil else {
                    return .notStarted("\(error)")
                }
            }
        }
    }

    private static let busyRetries = 5

    private func runOnce(
        onStart: @escaping @Sendable (Int32) -> Void,
        line: @escaping @Sendable (Stream, String) -> Void
    ) async throws -> Ending {
        var options = PlatformOptions()
        options.processGroupID = 0
        // On cancellation (reachd stopping): SIGTERM to the group, SIGKILL to it after the grace.
        options.teardownSequence = [.gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: killGrace)]
        let (timeout, killGrace) = (self.timeout, self.killGrace)
        // The raw-bytes form is handed to execve as is: each entry must carry its own NUL.
        let variables = environment.map { Array("\($0.key)=\($0.value)\0".utf8) }
        let result = try await Subprocess.run(
            .path(FilePath(path)),
            arguments: [],
            environment: .custom(variables),
            workingDirectory: "/",
            platformOptions: options,
            input: .none,
            output: .sequence,
            error: .sequence
        ) { execution in
            onStart(execution.processIdentifier.value)
            let output = Task {
                async let stdout: Void = Self.pump(execution.standardOutput, .stdout, line)
                async let stderr: Void = Self.pump(execution.standardError, .stderr, line)
                _ = await (stdout, stderr)
            }
            // Returns whether the hook outlived its timeout.
            return await withTaskCancellationHandler {
                guard case .expired = await output.value(within: timeout) else {
                    await output.value
                    return false
                }
                await Self.stop(execution, grace: killGrace)
                await output.value
                return true
            } onCancel: {
                output.cancel()
            }
        }
        if Task.isCancelled { return .cancelled }
        if result.closureResult { return .timedOut }
        switch result.terminationStatus {
        case .exited(let code): return .exited(code)
        case .signaled(let signal): return .signaled(signal)
        }
    }

    /// The watchdog's work once the hook outlived its timeout: `SIGTERM` to the group, then, after
    /// the grace period or as soon as the calling task is cancelled, `SIGKILL` to whatever is left
    /// of it, the hook or what it forked.
    private static func stop<Input, Output, Failure>(
        _ execution: Execution<Input, Output, Failure>,
        grace: Duration
    ) async {
        try? execution.send(signal: .terminate, toProcessGroup: true)
        let pgid = execution.processIdentifier.value
        let killAt = ContinuousClock.now.advanced(by: grace)
        while ContinuousClock.now < killAt, ProcessGroup.hasLiveMember(pgid) {
            guard (try? await Task.sleep(for: .milliseconds(50))) != nil else { break }
        }
        try? execution.send(signal: .kill, toProcessGroup: true)
    }

    private static func pump(
        _ output: SubprocessOutputSequence,
        _ stream: Stream,
        _ line: @Sendable (Stream, String) -> Void
    ) async {
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
