import Foundation

/// A TCP listener on 127.0.0.1 that accepts nothing: a port that is taken, or a target that a
/// test stops and starts again on the same port.
package final class LoopbackListener: @unchecked Sendable {
    package private(set) var port: Int
    private var fd: Int32 = -1

    /// Listens at once, on `port`, or on a free one the kernel picks when it is 0.
    package init(port: Int = 0) throws {
        self.port = port
        try start()
    }

    deinit {
        stop()
    }

    /// Listens (again) on ``port``.
    package func start() throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 128) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard listening else {
            stop()
            throw POSIXError(.EADDRINUSE)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    package func stop() {
        if fd >= 0 { close(fd) }
        fd = -1
    }
}
