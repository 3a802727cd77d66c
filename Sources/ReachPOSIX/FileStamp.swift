import Glibc

/// What tells that a file changed without reading it: its device, inode, size and modification
/// time (a file renamed over it, as resolv.conf writers do, is a new inode).
package struct FileStamp: Sendable, Equatable {
    private var device: UInt64
    private var inode: UInt64
    private var size: Int64
    private var seconds: Int
    private var nanoseconds: Int

    /// The stamp of the file at `path` now; `nil` when it cannot be read (missing, no permission).
    package init?(_ path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        seconds = Int(status.st_mtim.tv_sec)
        nanoseconds = Int(status.st_mtim.tv_nsec)
    }
}
