#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on 127.0.0.1 that never calls `accept` and never writes: the kernel completes
/// the handshake into the backlog, so a client connects and then hears nothing at all, the way a
/// hung server looks.
package final class SilentTCPListener: Sendable {
    package let port: Int
    private let fd: Int32

    package init() {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, length) }
        }
        _ = listen(socketFD, 64)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
        }
        fd = socketFD
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether a client has connected: its connection waits in the backlog (never accepted), which
    /// makes the listening socket readable.
    package var hasPendingConnection: Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }

    deinit { close(fd) }
}
