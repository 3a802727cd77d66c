import Glibc
import ReachTesting

/// A TCP connection to 127.0.0.1 that sends nothing: enough to take one of a server's slots.
final class PlainConnection: Sendable {
    private let descriptor: Int32

    init(port: Int) throws {
        descriptor = try connectLoopback(port: port)
    }

    /// Whether the server closes the connection within `limit` (anything it sends first is read).
    func isClosedByPeer(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 0) > 0 {
                let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count == 0 || (count < 0 && errno != EAGAIN) { return true }
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    deinit { close(descriptor) }
}
