import Foundation
import ReachTestRigs
import ReachTesting
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP client to 127.0.0.1 for requests no HTTP client would send: it writes raw bytes
/// (never raising SIGPIPE), stops writing once the server answers or closes, and reads only when
/// told to, until the server closes or a timeout passes. With a small receive buffer it is the
/// slow or stuck client that must not hold anyone else up.
final class RawSocket: Sendable {
    let descriptor: Int32
    private let isClosed = Atomic<Bool>(false)

    init(port: Int, receiveBuffer: Int32? = nil) throws {
        descriptor = try connectLoopback(port: port, receiveBuffer: receiveBuffer)
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
            let count = bytes[sent..<end].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
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
        let ending = Array(suffix.utf8)
        return await read(timeout: timeout) { received, _ in received.suffix(ending.count) == ending[...] }
    }

    /// Everything the server sends until `marker` has arrived, the server closes the connection,
    /// or `timeout` passes.
    func read(untilItContains marker: String, timeout: Duration) async -> String {
        let marker = Array(marker.utf8)
        // Only the bytes that could complete the marker are searched again: a stream read in small
        // pieces stays linear.
        return await read(timeout: timeout) { received, newCount in
            received[max(0, received.count - newCount - marker.count)...].firstRange(of: marker) != nil
        }
    }

    /// Reads until `done(received, bytesJustRead)` holds, the server closes, or `timeout` passes.
    private func read(timeout: Duration, done: @escaping @Sendable ([UInt8], Int) -> Bool) async -> String {
        await offPool {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while ContinuousClock.now < deadline {
                guard self.isReadable(timeoutMilliseconds: 50) else { continue }
                let count = buffer.withUnsafeMutableBytes { recv(self.descriptor, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                received.append(contentsOf: buffer[0..<count])
                if done(received, count) { break }
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
