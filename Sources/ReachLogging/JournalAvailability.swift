import Glibc

/// Whether this process should log to the journal: what `log.target: auto` decides on.
package enum JournalAvailability {
    /// Where journald receives native-protocol datagrams (and where libsystemd sends them).
    package static let socketPath = "/run/systemd/journal/socket"

    /// Whether standard error is the journal's stream, as under a systemd service:
    /// `$JOURNAL_STREAM` ("device:inode") names standard error's device and inode.
    package static func standardErrorIsJournalStream(environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(STDERR_FILENO, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    /// Whether a journald is listening on `path`: a datagram socket connects to a bound socket
    /// only (a file left by a journald that is gone refuses with ECONNREFUSED).
    package static func socketAnswers(path: String = socketPath) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.utf8.count + 1)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, length) == 0 }
        }
    }
}
