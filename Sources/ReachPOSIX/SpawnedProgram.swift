#if canImport(Glibc)
import Glibc
#endif

/// A program run to its end with `posix_spawn`, its input and output on `/dev/null`, no other
/// descriptor of ours, in a process group of its own (what it starts, a browser say, is not the
/// caller's to signal): for a helper the caller only needs the exit status of, such as `xdg-open`.
package enum SpawnedProgram {
    /// How the program ended.
    package enum Termination: Sendable, Equatable {
        case exited(Int32)
        case signaled(Int32)
    }

    /// Runs `name`, found on `searchPath` (this process's `PATH` when `nil`, which the program then
    /// gets too), and waits for it to end on a thread of its own.
    ///
    /// - Throws: ``SystemCallError`` when it is not found (`ENOENT`) or cannot be started.
    package static func run(
        _ name: String,
        arguments: [String],
        searchPath: String? = nil
    ) async throws(SystemCallError) -> Termination {
        var path = "/usr/bin:/bin"
        if let searchPath {
            path = searchPath
        } else if let inherited = getenv("PATH") {
            path = String(cString: inherited)
        }
        let candidates = path.split(separator: ":").map { (directory: Substring) -> String in "\(directory)/\(name)" }
        guard let executable = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw SystemCallError("execve", code: ENOENT)
        }
        var environment = environmentEntries().filter { !$0.hasPrefix("PATH=") }
        environment.append("PATH=\(path)")
        let pid = try spawn(executable, arguments: [name] + arguments, environment: environment)
        return await withCheckedContinuation { continuation in
            do throws(SystemCallError) {
                try DedicatedThread.start(named: "wait-\(name)") { continuation.resume(returning: wait(for: pid)) }
            } catch {
                continuation.resume(returning: wait(for: pid))
            }
        }
    }

    private static func spawn(
        _ executable: String,
        arguments: [String],
        environment: [String]
    ) throws(SystemCallError)
        -> pid_t
    {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
            posix_spawn_file_actions_addopen(
                &actions,
                descriptor,
                "/dev/null",
                descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY,
                0
            )
        }
        // Nor any descriptor of ours, which would live on in what it starts (a browser).
        actions.closeEveryDescriptor(from: STDERR_FILENO + 1)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let code = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard code == 0 else { throw SystemCallError("posix_spawn", code: code) }
        return pid
    }

    /// This process's environment, as `NAME=value` entries.
    private static func environmentEntries() -> [String] {
        var entries: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            entries.append(String(cString: pointer))
            entry += 1
        }
        return entries
    }

    private static func wait(for pid: pid_t) -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS are macros Swift cannot import.
        return status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signaled(status & 0x7F)
    }
}
