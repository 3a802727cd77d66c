#if canImport(Glibc)
import Glibc
#endif

/// Writes an executable file (a hook, a stand-in program) through a child process, and sets its mode.
///
/// No descriptor open for writing on the file ever exists in this process. Written here, a child
/// that another test forks between the open and the close would inherit the descriptor, and every
/// exec of the file would fail with `ETXTBSY` ("text file busy") until that child execs in turn:
/// a hook that "could not start" once in a few hundred runs.
package func writeExecutable(_ text: String, to path: String, mode: mode_t = 0o755) async throws {
    let written = try await runProgram("/bin/sh", ["-c", #"cat > "$1""#, "sh", path], input: text)
    guard written.status == 0 else { throw ExecutableNotWritten(path: path, errors: written.errors) }
    guard chmod(path, mode) == 0 else { throw ExecutableNotWritten(path: path, errors: "chmod failed: errno \(errno)") }
}

/// ``writeExecutable(_:to:mode:)`` could not write or mark the file.
package struct ExecutableNotWritten: Error, CustomStringConvertible {
    package var path: String
    package var errors: String
    package var description: String { "could not write \(path): \(errors)" }
}
