import Foundation
import ReachTesting

/// What systemd listens on for `sd_notify`: a datagram socket at a fresh path, for a test to put in
/// `NOTIFY_SOCKET` and read back every message a service sends, in order, with when it came.
package final class NotifySocket: @unchecked Sendable {
    /// One `sd_notify` message: its `KEY=value` lines and the moment it arrived.
    package struct Message: Sendable, CustomStringConvertible {
        package let lines: [String]
        package let arrived: ContinuousClock.Instant

        package func contains(_ line: String) -> Bool { lines.contains(line) }
        package func value(of key: String) -> String? {
            lines.first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
        }
        package var description: String { lines.joined(separator: " | ") }
    }

    package let path: String
    private let directory: TemporaryDirectory
    private let descriptor: Int32

    package init() throws {
        directory = try TemporaryDirectory("notify-socket")
        path = "\(directory)/notify.sock"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
    }

    deinit {
        close(descriptor)
    }

    /// The next message, or nil when none arrives within `timeout`. Sleeps between looks rather
    /// than blocking in `poll`, so that an in-process daemon keeps its (two) executor threads.
    package func next(timeout: Duration) async -> Message? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        return try? await ReachTesting.waitFor("a message on the notify socket", timeout: timeout) { () -> Message? in
            let count = buffer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            guard count > 0 else { return nil }
            return Message(
                lines: String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").map(String.init),
                arrived: .now
            )
        }
    }

    /// Reads messages until one satisfies `match`; returns it and everything read before it.
    /// Records nothing itself: the caller asserts on `nil`.
    package func waitFor(
        timeout: Duration = .seconds(20),
        _ match: (Message) -> Bool
    ) async -> (match: Message?, before: [Message]) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var before: [Message] = []
        while ContinuousClock.now < deadline {
            guard let message = await next(timeout: .milliseconds(100)) else { continue }
            if match(message) { return (message, before) }
            before.append(message)
        }
        return (nil, before)
    }

    /// Reads and returns what has already arrived, without waiting.
    @discardableResult
    package func drain() async -> [Message] {
        var messages: [Message] = []
        while let message = await next(timeout: .zero) { messages.append(message) }
        return messages
    }

    /// Every message that arrives during `duration`.
    package func collect(for duration: Duration) async -> [Message] {
        let deadline = ContinuousClock.now.advanced(by: duration)
        var messages: [Message] = []
        while ContinuousClock.now < deadline {
            if let message = await next(timeout: .milliseconds(50)) { messages.append(message) }
        }
        return messages
    }
}
