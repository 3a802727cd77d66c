import NIOCore
import NIOPosix
import ReachCore
import ReachSupport

/// One `dns` probe's questions and answers, on one event loop (``DNSProber``): the servers in
/// turn, UDP then TCP when truncated, until an answer settles it or the deadline passes. Every
/// method runs on `loop`; each attempt has a number, so that what an abandoned socket still says
/// is ignored.
final class DNSExchange: @unchecked Sendable {
    private let target: ProbeTarget
    private let check: DNSCheck
    private let servers: [HostPort]
    private let loop: any EventLoop
    private let whenDone: @Sendable (ProbeResult) -> Void
    private let started = NIODeadline.now()

    private var attempt = 0
    private var serverIndex = 0
    private var overTCP = false
    private var id: UInt16 = 0
    private var attemptStarted = NIODeadline.now()
    private var channel: (any Channel)?
    private var deadline: Scheduled<Void>?
    private var nextServer: Scheduled<Void>?
    /// The first failure a server answered with, kept while others are asked: it beats a later silence.
    private var answeredFailure: ProbeResult?
    private var finished = false

    init(
        target: ProbeTarget,
        check: DNSCheck,
        servers: [HostPort],
        loop: any EventLoop,
        whenDone: @escaping @Sendable (ProbeResult) -> Void
    ) {
        self.target = target
        self.check = check
        self.servers = servers
        self.loop = loop
        self.whenDone = whenDone
    }

    func begin() {
        deadline = loop.scheduleTask(in: TimeAmount(target.timeout)) { self.timedOut() }
        ask(server: 0, overTCP: check.transport == .tcp)
    }

    func cancel() {
        finish(failure: ProbeFailure(.cancelled))
    }

    // MARK: Asking

    private func ask(server index: Int, overTCP tcp: Bool) {
        guard !finished else { return }
        channel?.close(promise: nil)
        channel = nil
        nextServer?.cancel()
        attempt += 1
        (serverIndex, overTCP, attemptStarted) = (index, tcp, .now())
        id = UInt16.random(in: .min ... .max)
        let server = servers[index]
        if index + 1 < servers.count {
            // The time left, shared by the servers left to ask.
            let left = (started + TimeAmount(target.timeout)) - attemptStarted
            let share = TimeAmount.nanoseconds(left.nanoseconds / Int64(servers.count - index))
            nextServer = loop.scheduleTask(in: share) {
                self.ask(server: index + 1, overTCP: self.check.transport == .tcp)
            }
        }
        guard let query = DNSQuery.encode(id: id, name: check.questionName, type: check.recordType, framed: tcp),
            let address = try? SocketAddress(ipAddress: server.host, port: server.port)
        else {
            return finish(failure: ProbeFailure(.protocolError, detail: "\(check.questionName) cannot be asked"))
        }
        let number = attempt
        let connecting: EventLoopFuture<any Channel>
        let answered: @Sendable ([UInt8]) -> Void = { self.received($0, attempt: number) }
        let failed: @Sendable (any Error) -> Void = { self.failed($0, attempt: number) }
        if tcp {
            connecting = ClientBootstrap.forProbe(on: loop, connectTimeout: target.timeout, writesOnce: true) {
                try $0.pipeline.syncOperations.addHandler(DNSStreamHandler(answered: answered, failed: failed))
            }.connect(to: address)
        } else {
            connecting = DatagramBootstrap(group: loop).channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        DNSDatagramHandler(answered: answered, failed: failed)
                    )
                }
            }.connect(to: address)
        }
        connecting.whenComplete { outcome in
            switch outcome {
            case .success(let channel):
                guard number == self.attempt, !self.finished else { return channel.close(promise: nil) }
                self.channel = channel
                var buffer = channel.allocator.buffer(capacity: query.count)
                buffer.writeBytes(query)
                channel.writeAndFlush(buffer).whenFailure { self.failed($0, attempt: number) }
            case .failure(let error):
                self.failed(error, attempt: number)
            }
        }
    }

    // MARK: Hearing back

    private func received(_ bytes: [UInt8], attempt number: Int) {
        guard number == attempt, !finished else { return }
        let answer: DNSMessage
        do {
            answer = try DNSMessage.parse(bytes)
        } catch {
            return settle(ProbeFailure(.malformedAnswer, detail: "\(error)"))
        }
        // A stray datagram (an old query's answer, a forgery): not the answer; keep listening.
        guard answer.id == id, answer.isResponse else {
            return overTCP ? settle(ProbeFailure(.malformedAnswer, detail: "the answer is to another query")) : ()
        }
        if answer.isTruncated {
            guard !overTCP else {
                return settle(ProbeFailure(.truncatedAnswer, detail: "the answer over TCP is marked truncated"))
            }
            return ask(server: serverIndex, overTCP: true)
        }
        settle(check.failure(of: answer))
    }

    private func failed(_ error: any Error, attempt number: Int) {
        guard number == attempt, !finished else { return }
        if error is DNSStreamHandler.EndedEarly {
            return settle(ProbeFailure(.truncatedAnswer, phase: .body, detail: "the TCP stream ended mid-answer"))
        }
        var failure = HTTPFailureClassifier.classify(error, phase: overTCP ? .connect : .body)
        failure.phase = nil
        if failure.reason == .connectionRefused {
            failure.detail = "nothing answers DNS at \(servers[serverIndex])\(overTCP ? " over TCP" : "")"
        }
        settle(failure)
    }

    /// Ends the probe with this answer's outcome, or moves on to the next server when the answer
    /// is a server's failure another server may not share (`SERVFAIL`, `REFUSED`, a refusal).
    private func settle(_ failure: ProbeFailure?) {
        if let failure, overTCP, check.transport == .udp, failure.reason != .malformedAnswer,
            !failure.reason.isResolverAnswer
        {
            // The truncated UDP answer said there is more; TCP could not get it.
            let truncated = ProbeFailure(
                .truncatedAnswer,
                detail: "truncated over UDP, and over TCP: \(failure.detail ?? failure.reason.code)"
            )
            return moveOnOrFinish(truncated)
        }
        guard let failure else { return finish(failure: nil) }
        switch failure.reason {
        case .servfail, .dnsRefused, .connectionRefused, .networkUnreachable, .connectionReset: moveOnOrFinish(failure)
        default: finish(failure: failure)
        }
    }

    private func moveOnOrFinish(_ failure: ProbeFailure) {
        if answeredFailure == nil, failure.reason.isResolverAnswer { answeredFailure = result(failure) }
        guard serverIndex + 1 < servers.count else { return finish(failure: failure) }
        ask(server: serverIndex + 1, overTCP: check.transport == .tcp)
    }

    private func timedOut() {
        if overTCP, check.transport == .udp {
            return finish(failure: ProbeFailure(.truncatedAnswer, detail: "truncated over UDP, and no answer over TCP"))
        }
        finish(failure: ProbeFailure(.timeout, detail: "no answer from \(servers[serverIndex])"))
    }

    private func finish(failure: ProbeFailure?) {
        guard !finished else { return }
        finished = true
        deadline?.cancel()
        nextServer?.cancel()
        channel?.close(promise: nil)
        channel = nil
        // A server's answer beats a silence or a refusal of a later one.
        let outcome =
            failure.map { failure in
                failure.reason == .cancelled || failure.reason.isResolverAnswer
                    ? result(failure) : answeredFailure ?? result(failure)
            } ?? result(nil)
        whenDone(outcome)
    }

    private func result(_ failure: ProbeFailure?) -> ProbeResult {
        let now = NIODeadline.now()
        var result = ProbeResult(
            target: target.name,
            failure: failure,
            timings: ProbeTimings(total: Duration.nanoseconds((now - started).nanoseconds))
        )
        result.resolver = servers[serverIndex]
        return result
    }
}
