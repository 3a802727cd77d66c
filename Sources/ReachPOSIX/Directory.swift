#if canImport(Glibc)
import Glibc
#endif

/// Directories on disk, as `mkdir -p` and `test -d` see them.
package enum Directory {
    /// Creates `path` and every missing parent (mode 0755 less the umask); an existing directory is fine.
    package static func create(_ path: String) throws(SystemCallError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o755) != 0, errno != EEXIST || !exists(prefix) {
                throw SystemCallError.current("mkdir")
            }
            prefix += "/"
        }
    }

    /// Whether `path` is a directory (following symbolic links).
    package static func exists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }
}
