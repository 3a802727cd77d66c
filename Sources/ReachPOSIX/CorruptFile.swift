import ReachSupport

#if canImport(Glibc)
import Glibc
#endif

/// A SQLite file that failed its check is kept for inspection, never overwritten: the one way the
/// durable queue and the history move one aside.
package enum CorruptFile {
    /// Renames `path` and its WAL companions (`-wal`, `-shm`) to `PATH.corrupt-SECONDS`; returns the new path.
    ///
    /// - Throws: ``SystemCallError`` when the file itself cannot be renamed.
    package static func moveAside(_ path: String) throws(SystemCallError) -> String {
        let aside = "\(path).corrupt-\(WallTime.now().sinceEpoch.components.seconds)"
        guard rename(path, aside) == 0 else { throw SystemCallError("rename", code: errno) }
        for suffix in ["-wal", "-shm"] { _ = rename(path + suffix, aside + suffix) }
        return aside
    }
}
