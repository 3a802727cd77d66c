import Glibc
import ReachTestRigs
import ReachTesting
import Synchronization

/// A TCP connection to 127.0.0.1 that sends nothing unless asked: enough to take one of a server's
/// slots. It keeps what the server sent, read without blocking, so a test can wait for the server's
/// HTTP/2 frames.
final class PlainConnection: Sendable {
    private let descriptor: Int32
    private let state = Mutex<(received: [UInt8], closed: Bool)>(([], false))

    init(port: Int) throws {
        descriptor = try connectLoopback(port: port)
    }

    /// Reads whatever has arrived, without blocking; notes the end of the stream (or a reset).
    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        state.withLock { state in
            while !state.closed {
                let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count > 0 {
                    state.received += buffer[..<count]
                } else {
                    if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { state.closed = true }
                    return
                }
            }
        }
    }

    /// Whether the server closes the connection within `limit` (anything it sends first is read).
    func isClosedByPeer(within limit: Duration) async -> Bool {
        do {
            try await waitUntil("the server to close the connection", timeout: limit) {
                self.readAvailable()
                return self.state.withLock { $0.closed }
            }
            return true
        } catch {
            return false
        }
    }

    /// The HTTP/2 frames (type, flags) the server has sent so far.
    private var frames: [(type: UInt8, flags: UInt8)] {
        readAvailable()
        let bytes = state.withLock { $0.received }
        var frames: [(type: UInt8, flags: UInt8)] = []
        var offset = 0
        while offset + 9 <= bytes.count {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            guard offset + 9 + length <= bytes.count else { break }
            frames.append((bytes[offset + 3], bytes[offset + 4]))
            offset += 9 + length
        }
        return frames
    }

    /// Waits until the server has sent its HTTP/2 connection preface (a SETTINGS frame): it does so
    /// only once it has accepted the connection and kept it.
    func waitForServerPreface(within limit: Duration = .seconds(10)) async throws {
        try await waitUntil("the server's SETTINGS frame", timeout: limit) {
            self.frames.contains { $0.type == 0x4 && $0.flags & 0x1 == 0 }
        }
    }

    /// Speaks HTTP/2 for once: sends the client preface, empty SETTINGS and a PING, and waits for
    /// the server's PING acknowledgement, which proves the server still serves this connection.
    func ping(within limit: Duration = .seconds(10)) async throws {
        let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        let settings: [UInt8] = [0, 0, 0, 0x4, 0, 0, 0, 0, 0]
        let ping: [UInt8] = [0, 0, 8, 0x6, 0, 0, 0, 0, 0] + Array(repeating: 0x2A, count: 8)
        let bytes = preface + settings + ping
        let sent = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw SendFailed(errno: errno) }
        try await waitUntil("the server's PING acknowledgement", timeout: limit) {
            self.frames.contains { $0.type == 0x6 && $0.flags & 0x1 == 0x1 }
        }
    }

    struct SendFailed: Error {
        let errno: Int32
    }

    deinit { close(descriptor) }
}
