#if canImport(Glibc)
import Glibc
#endif

/// A program found on a search path and run to its end without its output (a ``SpawnedProcess``):
/// for a helper the caller only needs the exit status of, such as `xdg-open`.
package enum SpawnedProgram {
    /// Runs `name`, found on `searchPath` (this process's `PATH` when `nil`, which the program then
    /// gets too), and waits for it to end on a thread of its own.
    ///
    /// - Throws: ``SystemCallError`` when it is not found (`ENOENT`) or cannot be started.
    package static func run(
        _ name: String,
        arguments: [String],
        searchPath: String? = nil
    ) async throws(SystemCallError) -> SpawnedProcess.Termination {
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
        let process = try SpawnedProcess.start(
            executable,
            arguments: [name] + arguments,
            environment: environment,
            capturingOutput: false
        )
        return await process.ended { _, _ in }
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
}
