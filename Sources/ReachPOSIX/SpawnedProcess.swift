import CGNU

#if canImport(Glibc)
import Glibc
#endif

/// A program started with `posix_spawn` the one way reachd starts programs: in a process group of
/// its own, so that a signal to the group reaches all it forks; with default signal dispositions
/// and no blocked signals (reachd ignores `SIGTERM` to handle it itself, and a hook must not
/// inherit that); standard input on `/dev/null`; and no descriptor of ours but the standard three.
///
/// Its end is watched through a pidfd, so output is read only until the program exits, even when
/// something it forked keeps the pipes open.
package struct SpawnedProcess: Sendable {
    /// How the program ended.
    package enum Termination: Sendable, Equatable {
        case exited(Int32)
        case signaled(Int32)
    }

    /// Where a chunk of output came from.
    package enum Stream: Sendable {
        case output, errors
    }

    /// The program's pid, which is also its process group's id.
    package let pid: pid_t
    private let exitWatch: Int32
    private let output: Int32
    private let errors: Int32

    /// Starts `executable` with `arguments` (the first is the program's name) and `environment`
    /// (`NAME=value` entries).
    ///
    /// - Parameters:
    ///   - directory: Where it runs; `nil`: where reachd runs.
    ///   - capturingOutput: Whether its standard output and error come to ``collect(_:)``; else
    ///     they go to `/dev/null`.
    /// - Throws: ``SystemCallError`` for `posix_spawn` with the errno `execve` failed with
    ///   (`ENOENT`, `EACCES`, `ETXTBSY`: still open for writing), or of the pipes or the pidfd.
    package static func start(
        _ executable: String,
        arguments: [String],
        environment: [String],
        directory: String? = nil,
        capturingOutput: Bool
    ) throws(SystemCallError) -> SpawnedProcess {
        var output: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        if capturingOutput {
            guard spawn_pipe(&output) == 0 else { throw .current("pipe2") }
            guard spawn_pipe(&errors) == 0 else {
                let failure = SystemCallError.current("pipe2")
                closeOpen(output)
                throw failure
            }
        }
        defer { closeOpen([output[1], errors[1]]) }
        let pid: pid_t
        do {
            pid = try spawn(executable, arguments, environment, directory, output: output[1], errors: errors[1])
        } catch {
            closeOpen([output[0], errors[0]])
            throw error
        }
        let exitWatch = spawn_pidfd_open(pid)
        guard exitWatch >= 0 else {
            let failure = SystemCallError.current("pidfd_open")
            kill(-pid, SIGKILL)
            _ = reap(pid)
            closeOpen([output[0], errors[0]])
            throw failure
        }
        return SpawnedProcess(pid: pid, exitWatch: exitWatch, output: output[0], errors: errors[0])
    }

    private static func spawn(
        _ executable: String,
        _ arguments: [String],
        _ environment: [String],
        _ directory: String?,
        output: Int32,
        errors: Int32
    ) throws(SystemCallError) -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes,
            Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        )
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        for (descriptor, pipe) in [(STDOUT_FILENO, output), (STDERR_FILENO, errors)] {
            if pipe >= 0 {
                posix_spawn_file_actions_adddup2(&actions, pipe, descriptor)
            } else {
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
            }
        }
        actions.closeEveryDescriptor(from: STDERR_FILENO + 1)
        if let directory { actions.changeDirectory(to: directory) }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let code = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard code == 0 else { throw SystemCallError("posix_spawn", code: code) }
        return pid
    }

    /// Hands over its output as it comes until the program exits, then what the pipes still hold,
    /// and reaps it. Blocks: call it on a thread of its own (``ended(_:)``).
    package func collect(_ chunk: (Stream, UnsafeRawBufferPointer) -> Void) -> Termination {
        var watched = [
            pollfd(fd: output, events: Int16(POLLIN), revents: 0),
            pollfd(fd: errors, events: Int16(POLLIN), revents: 0),
            pollfd(fd: exitWatch, events: Int16(POLLIN), revents: 0),
        ]
        let streams: [Stream] = [.output, .errors]
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        // A read of one pipe; false once it has nothing more (its end, or an error).
        func read(_ index: Int) -> Bool {
            buffer.withUnsafeMutableBytes { bytes in
                while true {
                    let count = Glibc.read(watched[index].fd, bytes.baseAddress, bytes.count)
                    if count > 0 {
                        chunk(streams[index], UnsafeRawBufferPointer(rebasing: bytes[..<count]))
                        return true
                    }
                    if count < 0 && errno == EINTR { continue }
                    return false
                }
            }
        }
        while true {
            if poll(&watched, 3, -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in 0..<2 where watched[index].fd >= 0 && watched[index].revents != 0 {
                // Ignored by poll from now on: its end came.
                if !read(index) { watched[index].fd = -1 }
            }
            if watched[2].revents != 0 { break }
        }
        // It exited: what it wrote before is in the pipes. What it forked may write on, so the
        // drain is bounded (to 64 reads of each pipe) and never waits.
        for index in 0..<2 where watched[index].fd >= 0 {
            _ = fcntl(watched[index].fd, F_SETFL, fcntl(watched[index].fd, F_GETFL) | O_NONBLOCK)
            var reads = 0
            while reads < 64, read(index) { reads += 1 }
        }
        Self.closeOpen([output, errors, exitWatch])
        return Self.reap(pid)
    }

    /// ``collect(_:)`` on a thread of its own, for the caller to await.
    package func ended(
        _ chunk: @escaping @Sendable (Stream, UnsafeRawBufferPointer) -> Void
    ) async -> Termination {
        await withCheckedContinuation { continuation in
            let run = { @Sendable in continuation.resume(returning: collect(chunk)) }
            do throws(SystemCallError) {
                try DedicatedThread.start(named: "spawned-\(pid)", run)
            } catch {
                run()
            }
        }
    }

    /// Closes those of `descriptors` that are open (-1: a pipe not made).
    private static func closeOpen(_ descriptors: [Int32]) {
        for descriptor in descriptors where descriptor >= 0 { close(descriptor) }
    }

    private static func reap(_ pid: pid_t) -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS are macros Swift cannot import.
        return status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signaled(status & 0x7F)
    }
}
