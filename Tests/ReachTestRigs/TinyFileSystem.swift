import Foundation
import ReachTesting
import Synchronization

/// A small tmpfs of the test's own, mounted in a ``TemporaryDirectory``, for what a full disk does
/// to a writer: ``fill()`` takes every free block, deleting ``fillerPath`` frees them again.
/// Unmounted by ``unmount()``, or at the latest when the last reference goes (`umount --lazy`, so
/// that a file a process still holds open cannot keep it mounted); `scripts/test-leftovers` lists a
/// mount a crashed run left under its `TMPDIR`.
package final class TinyFileSystem: Sendable {
    /// The mount point.
    package let path: String
    /// The file ``fill()`` writes.
    package var fillerPath: String { path + "/filler" }
    private let directory: TemporaryDirectory
    private let isMounted = Atomic<Bool>(false)

    private static let mountPath =
        ["/usr/bin/mount", "/bin/mount"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "mount"
    private static let umountPath =
        ["/usr/bin/umount", "/bin/umount"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "umount"

    /// Whether the test may mount one: root only.
    package static let isAvailable = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: mountPath)

    /// Mounts a tmpfs of `size` (`mount`'s words: `256k`, `1m`), mode 0755.
    package init(size: String) async throws {
        directory = try TemporaryDirectory("tmpfs")
        path = directory.path + "/mount"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let result = try await runProgram(
            Self.mountPath,
            ["-t", "tmpfs", "-o", "size=\(size),mode=0755", "reachd-test", path]
        )
        guard result.status == 0 else { throw Failed(description: "mount -t tmpfs \(path): \(result.errors)") }
        isMounted.store(true, ordering: .relaxed)
    }

    /// Writes ``fillerPath`` until the file system refuses (`ENOSPC`); returns the bytes written.
    @discardableResult
    package func fill() throws -> Int {
        let descriptor = open(fillerPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw Failed(description: "open \(fillerPath): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var written = 0
        // Large writes first, then single bytes for the last partly used block.
        for chunk in [65_536, 4_096, 1] {
            let bytes = [UInt8](repeating: 0x5A, count: chunk)
            while true {
                let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, chunk) }
                if count > 0 { written += count } else { break }
            }
            guard errno == ENOSPC else {
                throw Failed(description: "write \(fillerPath): \(String(cString: strerror(errno)))")
            }
        }
        return written
    }

    /// Deletes ``fillerPath``: its blocks are free again.
    package func free() throws {
        try FileManager.default.removeItem(atPath: fillerPath)
    }

    /// Bytes still free.
    package var freeBytes: Int {
        var status = statvfs()
        return statvfs(path, &status) == 0 ? Int(status.f_bavail) * Int(status.f_frsize) : 0
    }

    package func unmount() async {
        guard isMounted.exchange(false, ordering: .relaxed) else { return }
        _ = try? await runProgram(Self.umountPath, ["--lazy", path])
    }

    /// A safety net only: tests unmount explicitly, off the cooperative pool.
    deinit {
        if isMounted.load(ordering: .relaxed) { _ = try? runProgramBlocking(Self.umountPath, ["--lazy", path]) }
    }

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }
}
