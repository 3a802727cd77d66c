import Glibc
import HeapModule
import ReachCore
import ReachPOSIX
import ReachSupport
import Synchronization

/// One thread that sends the echoes of every `icmp` probe and hears their replies, as fping does:
/// one ping socket a family for all targets (the kernel hands it every reply to its identifier,
/// told apart here by sequence number), one `poll` for both and the doorbell, and one timer heap
/// for every echo due and every burst's deadline. A thousand targets cost a thread, two sockets
/// and a wake-up per echo due, never a thread or a socket per probe.
///
/// The thread starts with the first burst, in the network namespace of the thread that submits it
/// (a process in one namespace, or a test's namespace thread), and ends at ``shutdown()``.
/// Replies are timed by the kernel's receive stamp (`SO_TIMESTAMPNS`), so that a loaded machine
/// does not read its own scheduling delay as the network's.
package final class EchoLoop: Sendable {
    /// One burst: what to send where, and whom to tell.
    struct Burst: Sendable {
        var id: UInt64
        var target: String
        var address: IPAddress
        var count: Int
        var spacing: Duration
        var timeout: Duration
        var whenDone: @Sendable (ProbeResult) -> Void
    }

    private struct Shared {
        var incoming: [Burst] = []
        var cancelled: [UInt64] = []
        var nextID: UInt64 = 0
        var running = false
        var stopping = false
    }

    private let shared = Mutex(Shared())
    private let doorbell = try? ShutdownDoorbell()

    package init() {}

    /// Sends `count` echoes to `address`, `spacing` apart, and calls `whenDone` once, on the loop's
    /// thread: when every echo is answered (or reported unreachable), else at `timeout` from now.
    /// Cancelling ends it at once with a `cancelled` result.
    func start(
        target: String,
        address: IPAddress,
        count: Int,
        spacing: Duration,
        timeout: Duration,
        whenDone: @escaping @Sendable (ProbeResult) -> Void
    ) -> ProbeCancellation {
        guard let doorbell else {
            whenDone(.failure(target, .protocolError, detail: "no eventfd for the echo thread", latency: .zero))
            return .none
        }
        let (id, stopping) = shared.withLock { shared in
            shared.nextID += 1
            let burst = Burst(
                id: shared.nextID,
                target: target,
                address: address,
                count: max(1, count),
                spacing: spacing,
                timeout: timeout,
                whenDone: whenDone
            )
            if !shared.stopping { shared.incoming.append(burst) }
            return (shared.nextID, shared.stopping)
        }
        guard !stopping else {
            whenDone(.failure(target, .cancelled, latency: .zero))
            return .none
        }
        startThread(doorbell)
        doorbell.ring()
        return ProbeCancellation { [weak self] in
            self?.shared.withLock { $0.cancelled.append(id) }
            self?.doorbell?.ring()
        }
    }

    /// Starts the thread, in the calling thread's network namespace, unless it runs (or the loop
    /// was shut down): a prober that resolves a name first calls it before it leaves for the
    /// resolver's thread.
    func startThread() {
        if let doorbell { startThread(doorbell) }
    }

    private func startThread(_ doorbell: ShutdownDoorbell) {
        let start = shared.withLock { shared in
            defer { shared.running = shared.running || !shared.stopping }
            return !shared.running && !shared.stopping
        }
        guard start else { return }
        do {
            try DedicatedThread.start(named: "reachd-echo") { EchoLoopThread(doorbell: doorbell, shared: self).run() }
        } catch {
            let bursts = shared.withLock { shared in
                shared.running = false
                defer { shared.incoming = [] }
                return shared.incoming
            }
            for burst in bursts {
                burst.whenDone(.failure(burst.target, .protocolError, detail: "\(error)", latency: .zero))
            }
        }
    }

    /// Ends every burst (with `cancelled`) and the thread; later bursts end at once, cancelled.
    package func shutdown() {
        shared.withLock { $0.stopping = true }
        doorbell?.ring()
    }

    /// What the thread takes at each wake-up: new bursts, cancellations, and whether to stop.
    fileprivate func take() -> (bursts: [Burst], cancelled: [UInt64], stopping: Bool) {
        shared.withLock { shared in
            defer { (shared.incoming, shared.cancelled) = ([], []) }
            return (shared.incoming, shared.cancelled, shared.stopping)
        }
    }

    /// The thread has stopped: a burst submitted from now on starts it again (after a shutdown, never).
    fileprivate func stopped() -> [Burst] {
        shared.withLock { shared in
            shared.running = false
            defer { shared.incoming = [] }
            return shared.incoming
        }
    }
}

/// The loop's thread and all its state: nothing here is shared, so nothing here is locked.
private final class EchoLoopThread {
    private let doorbell: ShutdownDoorbell
    private let shared: EchoLoop
    private var sockets: [IPFamily: Int32] = [:]
    private var bursts: [UInt64: BurstState] = [:]
    /// Which burst's echo each sequence number of each family's socket is.
    private var pending: [IPFamily: [UInt16: (burst: UInt64, index: Int)]] = [.ipv4: [:], .ipv6: [:]]
    private var nextSequence: [IPFamily: UInt16] = [.ipv4: 0, .ipv6: 0]
    private var timers = Heap<Timer>()
    private var data = [UInt8](repeating: 0, count: 512)
    private var control = [UInt8](repeating: 0, count: 512)

    /// Echoes due within this much of a wake-up go out in it: one wake-up, not several a millisecond apart.
    private static let slack: Int64 = 1_000_000
    /// The most reads of one socket per wake-up, so that a flood cannot starve the timers.
    private static let readsPerWake = 256

    init(doorbell: ShutdownDoorbell, shared: EchoLoop) {
        self.doorbell = doorbell
        self.shared = shared
    }

    struct Timer: Comparable {
        var at: Int64
        var burst: UInt64
        /// The burst's deadline, rather than its next echo.
        var isDeadline: Bool

        static func < (a: Timer, b: Timer) -> Bool { a.at < b.at }
    }

    struct BurstState {
        var burst: EchoLoop.Burst
        var start: Int64
        var deadline: Int64
        var spacing: Int64
        var sent = 0
        var sentAt: [(monotonic: Int64, real: Int64)] = []
        var sequences: [UInt16] = []
        var roundTrips: [Int64?] = []
        var errored: [Bool] = []
        var lastError: ICMPReport.ErrorReport?
        var sendError: Int32?

        var settled: Bool {
            sent == burst.count && (0..<sent).allSatisfy { roundTrips[$0] != nil || errored[$0] }
        }
    }

    func run() {
        var polls = [pollfd](repeating: pollfd(fd: -1, events: Int16(POLLIN), revents: 0), count: 3)
        while true {
            let (incoming, cancelled, stopping) = shared.take()
            let now = Self.monotonic()
            for burst in incoming { begin(burst, now: now) }
            for id in cancelled { finish(id, cancelled: true) }
            if stopping {
                for id in Array(bursts.keys) { finish(id, cancelled: true) }
                for burst in shared.stopped() { burst.whenDone(.failure(burst.target, .cancelled, latency: .zero)) }
                for descriptor in sockets.values { close(descriptor) }
                return
            }
            fireTimers(now: Self.monotonic())
            polls[0] = pollfd(fd: doorbell.descriptor, events: Int16(POLLIN), revents: 0)
            polls[1] = pollfd(fd: sockets[.ipv4] ?? -1, events: Int16(POLLIN), revents: 0)
            polls[2] = pollfd(fd: sockets[.ipv6] ?? -1, events: Int16(POLLIN), revents: 0)
            let wait =
                timers.min.map { Int32(clamping: max(0, ($0.at - Self.monotonic() + 999_999) / 1_000_000)) } ?? -1
            guard poll(&polls, 3, wait) > 0 else { continue }
            if polls[0].revents != 0 { doorbell.drain() }
            for (index, family) in [(1, IPFamily.ipv4), (2, .ipv6)] where polls[index].revents != 0 {
                read(family)
            }
        }
    }

    // MARK: Bursts

    private func begin(_ burst: EchoLoop.Burst, now: Int64) {
        let family = burst.address.family
        if sockets[family] == nil {
            switch PingSocket.open(family) {
            case .success(let descriptor):
                PingSocket.enableErrorReports(descriptor, family: family)
                sockets[family] = descriptor
            case .failure(.notPermitted(let code)):
                return burst.whenDone(
                    .failure(
                        burst.target,
                        .notPermitted,
                        detail: PingPermission.refusal(code, family: family),
                        latency: .zero
                    )
                )
            case .failure(.failed(let code)):
                return burst.whenDone(
                    .failure(burst.target, .protocolError, detail: SystemCallError.reason(code), latency: .zero)
                )
            }
        }
        let state = BurstState(
            burst: burst,
            start: now,
            deadline: now + burst.timeout.wholeNanoseconds,
            spacing: burst.spacing.wholeNanoseconds
        )
        bursts[burst.id] = state
        timers.insert(Timer(at: state.deadline, burst: burst.id, isDeadline: true))
        timers.insert(Timer(at: now, burst: burst.id, isDeadline: false))
    }

    private func fireTimers(now: Int64) {
        while let next = timers.min, next.at <= now + Self.slack {
            _ = timers.removeMin()
            guard bursts[next.burst] != nil else { continue }
            if next.isDeadline {
                finish(next.burst, cancelled: false)
            } else {
                send(next.burst, now: now)
            }
        }
    }

    private func send(_ id: UInt64, now: Int64) {
        guard var state = bursts[id], state.sent < state.burst.count,
            let descriptor = sockets[state.burst.address.family]
        else { return }
        let family = state.burst.address.family
        var sequence = nextSequence[family, default: 0]
        // The next sequence number no echo in flight holds (at most a few thousand are).
        repeat { sequence &+= 1 } while pending[family]?[sequence] != nil
        nextSequence[family] = sequence
        let request = PingSocket.echoRequest(family, sequence: sequence)
        let real = Self.realTime()
        var (result, code) = Self.send(request, to: state.burst.address, on: descriptor)
        // An ICMP error about any echo on this socket (another target's too) is reported once, by
        // the next call that asks: a send that fails so sent nothing, and the error is consumed
        // (its details are in the error queue). Once more tells it from this echo's own failure.
        if result < 0, [EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ECONNREFUSED, EPROTO].contains(code) {
            (result, code) = Self.send(request, to: state.burst.address, on: descriptor)
        }
        state.sentAt.append((now, real))
        state.sequences.append(sequence)
        state.roundTrips.append(nil)
        state.errored.append(result < 0 && code != EAGAIN && code != ENOBUFS)
        if result < 0, code != EAGAIN, code != ENOBUFS { state.sendError = code }
        pending[family]?[sequence] = (id, state.sent)
        state.sent += 1
        if state.sent < state.burst.count {
            timers.insert(Timer(at: state.start + state.spacing * Int64(state.sent), burst: id, isDeadline: false))
        }
        bursts[id] = state
        if state.settled { finish(id, cancelled: false) }
    }

    private static func send(_ request: [UInt8], to address: IPAddress, on descriptor: Int32) -> (Int, Int32) {
        let result = address.withSocketAddress(port: 0) { address, length in
            request.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, 0, address, length) }
        }
        return (result, result < 0 ? errno : 0)
    }

    /// Reads what `family`'s socket has: the error queue (ICMP errors), then the replies.
    private func read(_ family: IPFamily) {
        guard let descriptor = sockets[family] else { return }
        for errors in [true, false] {
            for _ in 0..<Self.readsPerWake {
                let (received, controlLength) = receive(descriptor, errorQueue: errors)
                if received < 0 {
                    // Without the error queue, a queued ICMP error is reported once as the read's errno: go on.
                    if errno == EAGAIN || errno == EWOULDBLOCK || errors { break } else { continue }
                }
                let bytes = data[0..<received]
                let controlBytes = control[0..<controlLength]
                if errors {
                    if let report = ICMPReport.error(control: controlBytes, data: bytes, family: family) {
                        reported(report, family: family)
                    }
                } else if let sequence = ICMPReport.replySequence(bytes, family: family) {
                    answered(sequence, family: family, kernelTime: ICMPReport.receiveTime(control: controlBytes))
                }
            }
        }
    }

    private func receive(_ descriptor: Int32, errorQueue: Bool) -> (Int, Int) {
        var name = sockaddr_storage()
        return data.withUnsafeMutableBytes { dataBytes in
            control.withUnsafeMutableBytes { controlBytes in
                withUnsafeMutablePointer(to: &name) { namePointer in
                    var vector = iovec(iov_base: dataBytes.baseAddress, iov_len: dataBytes.count)
                    return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                        var header = msghdr(
                            msg_name: UnsafeMutableRawPointer(namePointer),
                            msg_namelen: socklen_t(MemoryLayout<sockaddr_storage>.size),
                            msg_iov: vectorPointer,
                            msg_iovlen: 1,
                            msg_control: controlBytes.baseAddress,
                            msg_controllen: controlBytes.count,
                            msg_flags: 0
                        )
                        let received = recvmsg(
                            descriptor,
                            &header,
                            Int32(MSG_DONTWAIT) | (errorQueue ? PingSocket.messageErrorQueue : 0)
                        )
                        return (received, received < 0 ? 0 : min(Int(header.msg_controllen), controlBytes.count))
                    }
                }
            }
        }
    }

    private func answered(_ sequence: UInt16, family: IPFamily, kernelTime: Int64?) {
        let now = Self.monotonic()
        guard let (id, index) = pending[family]?.removeValue(forKey: sequence), var state = bursts[id],
            state.roundTrips[index] == nil
        else { return }
        let measured = now - state.sentAt[index].monotonic
        // The kernel's stamp, unless the real-time clock stepped between the two readings.
        let stamped = kernelTime.map { $0 - state.sentAt[index].real } ?? -1
        state.roundTrips[index] = stamped >= 0 && stamped <= measured ? stamped : measured
        bursts[id] = state
        if state.settled { finish(id, cancelled: false) }
    }

    private func reported(_ report: ICMPReport.ErrorReport, family: IPFamily) {
        guard let (id, index) = pending[family]?.removeValue(forKey: report.sequence), var state = bursts[id] else {
            return
        }
        state.errored[index] = true
        state.lastError = report
        bursts[id] = state
        if state.settled { finish(id, cancelled: false) }
    }

    private func finish(_ id: UInt64, cancelled: Bool) {
        guard let state = bursts.removeValue(forKey: id) else { return }
        let family = state.burst.address.family
        for sequence in state.sequences where pending[family]?[sequence]?.burst == id {
            pending[family]?[sequence] = nil
        }
        state.burst.whenDone(cancelled ? .failure(state.burst.target, .cancelled, latency: .zero) : result(of: state))
    }

    private func result(of state: BurstState) -> ProbeResult {
        let echoes = EchoStatistics(
            sent: state.sent,
            roundTrips: state.roundTrips.compactMap { $0.map(Duration.nanoseconds) }
        )
        let elapsed = Duration.nanoseconds(Self.monotonic() - state.start)
        var result: ProbeResult
        if let median = echoes.median {
            result = .success(state.burst.target, latency: median)
        } else if let error = state.lastError {
            var failure = ICMPErrorWords.failure(error, family: state.burst.address.family)
            failure.reportedBy = error.reporter
            result = ProbeResult(target: state.burst.target, failure: failure, timings: ProbeTimings(total: elapsed))
        } else if let code = state.sendError {
            result = ProbeResult(
                target: state.burst.target,
                failure: SocketFailure.classify(errno: code, phase: .connect)
                    ?? ProbeFailure(.networkUnreachable, detail: SystemCallError.reason(code)),
                timings: ProbeTimings(total: elapsed)
            )
            result.failure?.phase = nil
        } else {
            result = .failure(
                state.burst.target,
                .timeout,
                detail: "no reply to \(state.sent) echo\(state.sent == 1 ? "" : "es")",
                latency: elapsed
            )
        }
        result.echoes = echoes
        return result
    }

    private static func monotonic() -> Int64 { clock(CLOCK_MONOTONIC) }
    private static func realTime() -> Int64 { clock(CLOCK_REALTIME) }

    private static func clock(_ id: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(id, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    fileprivate var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue + attoseconds / 1_000_000_000
    }
}
