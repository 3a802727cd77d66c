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
/// It asks the default gateway while targets fail (the evidence for the `gateway` fault), out of
/// the gateway's interface, a few times a second at most; `icmp` targets, many echoes a second,
/// share one thread and one socket a family instead (``EchoLoop``). Each echo here runs on a
/// thread of its own that waits in `poll(2)`, never on Swift's cooperative pool, and never spins.
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
        let descriptor: Int32
        switch PingSocket.open(address.family) {
        case .success(let opened): descriptor = opened
        case .failure(.notPermitted(let code)): return .notPermitted(errno: code)
        case .failure(.failed(let code)): return .failed(errno: code)
        }
        defer { close(descriptor) }
        if let interface, let code = PingSocket.bind(descriptor, toDevice: interface) { return .failed(errno: code) }
        let replyType = PingSocket.replyType(address.family)
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let now = clock.now
            if sent < count, now >= start + spacing * sent {
                let request = PingSocket.echoRequest(address.family, sequence: UInt16(truncatingIfNeeded: sent + 1))
                let result = address.withSocketAddress(port: 0) { pointer, length in
                    request.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, 0, pointer, length) }
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
