import Glibc
import ReachCore
import ReachPOSIX
import ReachSupport

/// ICMP echo over an unprivileged ping socket (`SOCK_DGRAM` with `IPPROTO_ICMP` or
/// `IPPROTO_ICMPV6`): asks a host whether it is there without raw sockets or capabilities. The
/// kernel allows such sockets to the groups in `net.ipv4.ping_group_range` (systemd's default
/// sysctl opens it to every group; a bare kernel's `1 0` to none, and then even root gets `EACCES`),
/// and fills in the identifier and checksum itself.
///
/// Today it asks the default gateway while targets fail (the evidence for the `gateway` fault); an
/// ICMP probe kind can reuse it as is. Each echo runs on a thread of its own that waits in
/// `poll(2)`, never on Swift's cooperative pool, and never spins.
package struct ICMPEchoProber: Sendable {
    /// What an echo found.
    package enum Outcome: Sendable, Hashable {
        /// A reply came, this long after the first request.
        case answered(latency: Duration)
        /// No reply to any request within the wait.
        case silent
        /// The kernel refused a ping socket (`EACCES`: `ping_group_range` leaves reachd's group out;
        /// `EPROTONOSUPPORT`/`EAFNOSUPPORT`: no ICMP sockets); the errno.
        case notPermitted(errno: Int32)
        /// Another error (no such interface, no route); the errno.
        case failed(errno: Int32)
    }

    /// Requests sent, `spacing` apart; then `wait` more for a late reply.
    package var count: Int
    package var spacing: Duration
    package var wait: Duration

    /// Three requests 250 ms apart, then a second: a silent host is told within 1.5 s, and one
    /// lost packet is not a silent host.
    package init(count: Int = 3, spacing: Duration = .milliseconds(250), wait: Duration = .seconds(1)) {
        self.count = max(1, count)
        self.spacing = spacing
        self.wait = wait
    }

    /// Sends echo requests to `address`, out of `interface` when given (`SO_BINDTODEVICE`, allowed
    /// without privileges since Linux 5.7), until one is answered or the wait ends.
    package func echo(_ address: IPAddress, interface: String? = nil) async -> Outcome {
        let (count, spacing, wait) = (count, spacing, wait)
        return await withCheckedContinuation { continuation in
            do {
                try DedicatedThread.start(named: "reachd-icmp") {
                    continuation.resume(
                        returning: Self.run(address, interface: interface, count: count, spacing: spacing, wait: wait)
                    )
                }
            } catch {
                continuation.resume(returning: .failed(errno: (error as? SystemCallError)?.code ?? EAGAIN))
            }
        }
    }

    private static func run(
        _ address: IPAddress,
        interface: String?,
        count: Int,
        spacing: Duration,
        wait: Duration
    ) -> Outcome {
        let ipv6 = address.family == .ipv6
        let descriptor = socket(
            ipv6 ? AF_INET6 : AF_INET,
            Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            Int32(ipv6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP)
        )
        guard descriptor >= 0 else {
            let code = errno
            return [EACCES, EPERM, EPROTONOSUPPORT, EAFNOSUPPORT].contains(code)
                ? .notPermitted(errno: code) : .failed(errno: code)
        }
        defer { close(descriptor) }
        if let interface {
            let bound = interface.withCString {
                setsockopt(descriptor, SOL_SOCKET, SO_BINDTODEVICE, $0, socklen_t(strlen($0) + 1))
            }
            guard bound == 0 else { return .failed(errno: errno) }
        }
        // Echo request: type 8 (ICMPv6: 128), code 0; the kernel sets the checksum and identifier.
        let request: [UInt8] = [ipv6 ? 128 : 8, 0, 0, 0, 0, 0, 0, 1] + Array("reachd".utf8)
        let replyType: UInt8 = ipv6 ? 129 : 0
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let now = clock.now
            if sent < count, now >= start + spacing * sent {
                var sequence = request
                sequence[7] = UInt8(truncatingIfNeeded: sent + 1)
                let result = address.withSocketAddress(port: 0) { pointer, length in
                    sequence.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, 0, pointer, length) }
                }
                if result < 0, errno != EAGAIN, errno != ENOBUFS { return sent == 0 ? .failed(errno: errno) : .silent }
                sent += 1
            }
            let deadline = sent < count ? start + spacing * sent : start + spacing * (count - 1) + wait
            let remaining = clock.now.duration(to: deadline)
            if sent >= count, remaining <= .zero { return .silent }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(max(0, remaining.milliseconds))
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            // Only replies to this socket's identifier arrive; an ICMP error (unreachable) reads as an error: keep waiting.
            let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if received >= 1, buffer[0] == replyType { return .answered(latency: start.duration(to: clock.now)) }
        }
    }
}
