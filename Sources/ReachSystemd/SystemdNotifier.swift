import Glibc

/// Tells the service manager how reachd is doing: the `sd_notify` protocol (`READY=1`,
/// `STATUS=…`, `WATCHDOG=1`, `RELOADING=1`, `STOPPING=1`), one datagram per message on the socket
/// systemd names in `NOTIFY_SOCKET`.
///
/// libsystemd's `sd_notify` reads the socket from the process environment at every call; this
/// sends the same datagram to a socket given once, so that tests can each listen on a socket of
/// their own in one process, and nothing reads the environment after start-up. Without a socket
/// (not started by systemd) every message is a no-op, as with `sd_notify`.
package struct SystemdNotifier: Sendable {
    /// The socket's address: a path, or `@name` in the abstract namespace. `nil`: notifications off.
    package let socket: String?
    /// How often systemd expects `WATCHDOG=1` at the latest (`WatchdogSec=`); `nil` when the
    /// watchdog is off or meant for another process.
    package let watchdogInterval: Duration?

    package init(socket: String?, watchdogInterval: Duration?) {
        self.socket = socket.flatMap { $0.isEmpty ? nil : $0 }
        self.watchdogInterval = watchdogInterval
    }

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` as systemd sets them for a
    /// service (`WATCHDOG_PID`, when present, must be this process, as `sd_watchdog_enabled` checks).
    package init(environment: [String: String]) {
        var watchdog: Duration?
        if let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0,
            environment["WATCHDOG_PID"].map({ $0 == String(getpid()) }) ?? true
        {
            watchdog = .microseconds(microseconds)
        }
        self.init(socket: environment["NOTIFY_SOCKET"], watchdogInterval: watchdog)
    }

    /// Whether a service manager listens.
    package var isEnabled: Bool { socket != nil }

    /// Sends `lines` (each `KEY=value`) as one message. Returns `errno` when sending failed, `nil`
    /// when it was sent or notifications are off. Never blocks: a service manager that does not
    /// read its socket loses the message rather than stalling reachd.
    @discardableResult
    package func notify(_ lines: [String]) -> Int32? {
        guard let socket else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socket.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !path.isEmpty, path.count < capacity else { return ENAMETOOLONG }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in buffer.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path[0] == 0 ? 0 : 1))

        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        let message = Array(lines.joined(separator: "\n").utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                message.withUnsafeBytes { bytes in
                    sendto(
                        descriptor,
                        bytes.baseAddress,
                        bytes.count,
                        Int32(MSG_NOSIGNAL | MSG_DONTWAIT),
                        address,
                        length
                    )
                }
            }
        }
        return sent < 0 ? errno : nil
    }

    /// `MONOTONIC_USEC=` as `RELOADING=1` wants it: `CLOCK_MONOTONIC` now, in microseconds.
    package static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}
