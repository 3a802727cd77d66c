import Foundation

/// A directory of one test's own under `$TMPDIR` (else `/tmp`), for its files, its sockets and the
/// state of the processes it starts; removed, with everything in it, when the last reference goes.
/// Every test puts what it writes in one, so that a test run leaves nothing behind:
/// `scripts/test` runs the suite with a `TMPDIR` of its own and fails if anything is left in it.
///
/// Kept by a suite or a helper object, it goes when they go; kept by a local, at the end of the
/// scope (its `deinit` touches the file system, so Swift does not end it sooner).
package final class TemporaryDirectory: Sendable, CustomStringConvertible {
    /// `$TMPDIR/reachd-LABEL-XXXXXXXX`: short, so that a unix socket path in it fits in 108 bytes.
    package let path: String

    /// Creates the directory, mode 0755: the processes a test starts read it, whoever they run as.
    package init(_ label: String) throws {
        path =
            FileManager.default.temporaryDirectory.appending(path: "reachd-\(label)-\(UUID().uuidString.prefix(8))")
            .path
        try FileManager.default.createDirectory(
            atPath: path,
            withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o755]
        )
    }

    package var url: URL { URL(filePath: path, directoryHint: .isDirectory) }

    /// The path, so that `"\(directory)/name"` names a file in it.
    package var description: String { path }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
