import Foundation
import ReachTesting
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP client to 127.0.0.1 for requests no HTTP client would send: it writes raw bytes
/// (never raising SIGPIPE), stops writing once the server answers or closes, and reads until the
/// server closes or a timeout passes.
final class RawSocket: Sendable {
    let descriptor: Int32
    private let isClosed = Atomic<Bool>(false)

    init(port: Int) throws {
        descriptor = try connectLoopback(port: port)
    }

    /// Writes `bytes` in chunks until all are sent, the server has something to say, or the
    /// connection breaks; returns how many bytes went out.
    @discardableResult
    func send(_ bytes: [UInt8], chunk: Int = 16 * 1024) async -> Int {
        await offPool { self.blockingSend(bytes, chunk: chunk) }
    }

    func send(_ text: String) async { await send(Array(text.utf8)) }

    private func blockingSend(_ bytes: [UInt8], chunk: Int) -> Int {
        var sent = 0
        while sent < bytes.count {
            if isReadable(timeoutMilliseconds: 0) { break }
            let end = min(bytes.count, sent + chunk)
            let count = bytes[sent..<end].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { break }
            sent += count
        }
        return sent
    }

    func isReadable(timeoutMilliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, timeoutMilliseconds) > 0
    }

    /// Everything the server sends until it closes the connection or `timeout` passes, and whether it closed.
    func readUntilClosed(timeout: Duration) async -> (text: String, closed: Bool) {
        await offPool { self.blockingRead(timeout: timeout) }
    }

    private func blockingRead(timeout: Duration) -> (text: String, closed: Bool) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        repeat {
            guard isReadable(timeoutMilliseconds: timeout == .zero ? 0 : 50) else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (String(decoding: received, as: UTF8.self), true) }
            received.append(contentsOf: buffer[0..<count])
        } while ContinuousClock.now < deadline
        return (String(decoding: received, as: UTF8.self), false)
    }

    /// Everything the server sends until what arrived ends with `suffix` (the known end of a
    /// response), the server closes the connection, or `timeout` passes.
    func read(until suffix: String, timeout: Duration) async -> String {
        await offPool {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            let ending = Array(suffix.utf8)
            while received.suffix(ending.count) != ending[...], ContinuousClock.now < deadline {
                guard self.isReadable(timeoutMilliseconds: 50) else { continue }
                let count = buffer.withUnsafeMutableBytes { recv(self.descriptor, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                received.append(contentsOf: buffer[0..<count])
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// Whether the server has closed the connection (a read returns end-of-file or a reset) within `timeout`.
    func isClosedByServer(within timeout: Duration) async -> Bool {
        await readUntilClosed(timeout: timeout).closed
    }

    /// Closes it now: a test that needs the server to see a close must not wait for the last
    /// reference to go (a reading thread may still hold one for a moment).
    func closeNow() {
        if !isClosed.exchange(true, ordering: .acquiringAndReleasing) { close(descriptor) }
    }

    deinit { closeNow() }
}
