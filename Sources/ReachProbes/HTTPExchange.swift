import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import ReachCore
import ReachPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP(S) probe from connect to close, confined to one event loop: the connection, the
/// request, the deadline (a callback scheduled on that loop) and the verdict all happen there, with no
/// lock and no hop until the result is handed over.
///
/// It moves through the phases it can name in a failure: `connect` (DNS and TCP, both families
/// raced for `auto`), `tls` (the handshake), `head` (the request is out, waiting for the answer),
/// `body`. An HTTPS probe also keeps what the server presented (``ServerCertificate``), whether or
/// not it verified. Whatever ends it first (the whole answer, an error, the peer closing, the deadline, a
/// cancellation) settles it, calling `whenDone`; everything after that is ignored, and the channel
/// is closed with a reset so that no socket lingers in TIME_WAIT.
///
/// Neither the deadline nor the result goes through an `EventLoopFuture`: at a thousand probes a
/// second, each future's allocation and generic metadata lookups showed in profiles.
///
/// `@unchecked Sendable`: its state is touched only on ``loop`` (checked in debug builds); the
/// reference crosses threads only to schedule work there.
final class HTTPExchange: @unchecked Sendable {
    private enum Stage { case connecting, handshaking, awaitingHead, readingBody, done }

    let loop: any EventLoop
    /// Called exactly once, on ``loop``.
    private let whenDone: @Sendable (ProbeResult) -> Void
    private let target: ProbeTarget
    private let check: HTTPCheck
    private let plan: HTTPRequestPlan
    private let sockets: ProbeSocket
    private let started = ContinuousClock.now
    private var stage = Stage.connecting
    private var channel: (any Channel)?
    private var deadline: NIOScheduledCallback?
    private var timings = ProbeTimings(total: .zero)
    private var status = 0
    /// A redirect's `Location`: where a captive portal sends people to sign in.
    private var location: String?
    private var body = ByteBuffer()
    private var bodyIsCut = false
    /// A connection whose handshake ended before the bootstrap reported it as the one connected.
    private var handshakeEndedEarly: ObjectIdentifier?
    /// The chain the server presented, once a handshake got as far as its certificates.
    private var certificate: ServerCertificate?
    /// The connection was handed to NIO with its connect under way (``ProbeSocket``): it is up
    /// when ``ConnectWatcher`` says so, not when the channel is.
    private var connectsItself = false

    init(
        target: ProbeTarget,
        check: HTTPCheck,
        plan: HTTPRequestPlan,
        sockets: ProbeSocket,
        loop: any EventLoop,
        whenDone: @escaping @Sendable (ProbeResult) -> Void
    ) {
        self.target = target
        self.check = check
        self.plan = plan
        self.sockets = sockets
        self.loop = loop
        self.whenDone = whenDone
    }

    private var elapsed: Duration { started.duration(to: .now) }

    /// Arms the deadline and starts connecting. Call on ``loop``.
    func start() {
        loop.assertInEventLoop()
        guard stage != .done else { return }
        do {
            deadline = try loop.scheduleCallback(in: .init(target.timeout), handler: self)
        } catch {
            return finish(failure: ProbeFailure(.cancelled, phase: .connect, detail: "the event loop is shutting down"))
        }
        if let address = ProbeSocket.address(plan.address, family: target.addressFamily, interface: target.interface) {
            connectsItself = true
            sockets.connect(to: address, on: loop, writesOnce: plan.tls == nil).whenComplete { [self] outcome in
                switch outcome {
                case .success(let channel): adopt(channel)
                case .failure(let error): failed(error)
                }
            }
            return
        }
        // The connect timeout is past the deadline: the deadline decides, and names the phase.
        ClientBootstrap.forProbe(
            on: loop,
            connectTimeout: target.timeout + .seconds(1),
            writesOnce: plan.tls == nil,
            interface: target.interface
        ) { [self] channel in
            try configure(channel.pipeline.syncOperations)
        }
        .connect(to: plan.endpoint, family: target.addressFamily, on: loop)
        .whenComplete { [self] outcome in
            switch outcome {
            case .success(let channel): connected(channel)
            case .failure(let error): failed(error)
            }
        }
    }

    /// Takes over a connection ``ProbeSocket`` handed to NIO, its connect perhaps still under way:
    /// NIO reports it registered and active before any event of it reaches a handler, so the
    /// handlers added here see all of them (TLS starts its handshake as it is added).
    private func adopt(_ channel: any Channel) {
        guard stage == .connecting else {
            channel.close(promise: nil)
            return
        }
        self.channel = channel
        do {
            try configure(channel.pipeline.syncOperations)
        } catch {
            return failed(error)
        }
        connected(channel)
    }

    /// Ends the probe as cancelled (shutdown, link loss). Call on ``loop``.
    func cancel() {
        loop.assertInEventLoop()
        finish(failure: ProbeFailure(.cancelled, phase: phase))
    }

    private func configure(_ pipeline: ChannelPipeline.SynchronousOperations) throws {
        let handler = HTTPExchangeHandler(exchange: self, watchesChain: plan.tls != nil)
        if connectsItself, plan.tls != nil { try pipeline.addHandler(ConnectWatcher(exchange: self)) }
        if let tls = plan.tls {
            try pipeline.addHandler(
                ChainWatchingTLS.clientHandler(context: tls, serverHostname: plan.serverHostname) {
                    handler.chain?.saw($0)
                }
            )
        }
        // The request is bytes encoded once, for the plan, and the answer is read by the handler
        // itself (``HTTPResponseReader``): one handler, where NIOHTTP1's codec took three.
        try pipeline.addHandler(handler)
    }

    private func connected(_ channel: any Channel) {
        if connectsItself {
            // The first write leaves once the connect is done, so its outcome is the connect's: the
            // request's here, TLS's ClientHello's through ``ConnectWatcher``.
            if stage == .connecting, plan.tls == nil {
                channel.writeAndFlush(plan.encodedRequest, promise: firstWrite(on: channel))
            }
            return
        }
        guard stage == .connecting else {
            channel.close(promise: nil)
            return
        }
        self.channel = channel
        established(on: channel)
    }

    /// A promise for the first write on a connection ``ProbeSocket`` connected, whose outcome is
    /// the connect's.
    func firstWrite(on channel: any Channel) -> EventLoopPromise<Void> {
        let written = loop.makePromise(of: Void.self)
        written.futureResult.whenComplete { [self] outcome in
            switch outcome {
            case .success: established(on: channel)
            case .failure(let error): failed(error, on: channel)
            }
        }
        return written
    }

    /// The connection is up.
    private func established(on channel: any Channel) {
        guard stage == .connecting, channel === self.channel else { return }
        timings.connect = elapsed
        if plan.tls == nil {
            stage = .awaitingHead
            if !connectsItself { sendRequest() }
        } else {
            stage = .handshaking
            if handshakeEndedEarly == ObjectIdentifier(channel) { handshakeCompleted(on: channel) }
        }
    }

    private func sendRequest() {
        channel?.writeAndFlush(plan.encodedRequest, promise: nil)
    }

    // MARK: Events from the channel (all on `loop`)
    //
    // While `auto` races both families, several connections may exist at once; only the one the
    // bootstrap reported as connected speaks for the probe, and the others' events are ignored.

    func handshakeCompleted(on channel: any Channel) {
        if stage == .connecting { handshakeEndedEarly = ObjectIdentifier(channel) }
        guard stage == .handshaking, channel === self.channel else { return }
        timings.tls = elapsed
        stage = .awaitingHead
        sendRequest()
    }

    /// The server's chain, when the handshake succeeded or failed. Before the bootstrap names the
    /// connection, only the one it is about to name can have got this far.
    func presented(_ certificate: ServerCertificate, on channel: any Channel) {
        guard stage == .connecting || channel === self.channel else { return }
        self.certificate = certificate
    }

    func received(_ part: HTTPResponseReader.Part, on channel: any Channel) {
        guard channel === self.channel else { return }
        switch part {
        case .head(let status, let location):
            // Interim answers (100 Continue, 103 Early Hints) never get here: the reader skips them.
            guard stage == .awaitingHead else { return }
            timings.firstByte = elapsed
            self.status = status
            if (300..<400).contains(status) { self.location = location }
            stage = .readingBody
        case .body(var part):
            guard stage == .readingBody, plan.keepsBody else { return }
            let room = HTTPProber.bodyLimit - body.readableBytes
            if room > 0, let slice = part.readSlice(length: min(room, part.readableBytes)) {
                body.writeImmutableBuffer(slice)
            }
            if part.readableBytes > 0 { bodyIsCut = true }
        case .end:
            guard stage == .readingBody else { return }
            timings.total = elapsed
            settle(
                HTTPProber.judge(
                    status: status,
                    location: location,
                    body: body,
                    bodyIsCut: bodyIsCut,
                    check: check,
                    target: target.name,
                    timings: timings
                )
            )
        }
    }

    func failed(_ error: any Error, on channel: any Channel) {
        guard stage != .done, channel === self.channel else { return }
        failed(error)
    }

    private func failed(_ error: any Error) {
        // A server that closes a TLS connection without close_notify after a complete answer:
        // the answer is whole, and the close that follows ends it (``HTTPResponseReader/closed()``).
        if stage == .readingBody, let error = error as? NIOSSLError, case .uncleanShutdown = error { return }
        finish(failure: HTTPFailureClassifier.classify(error, phase: phase))
    }

    func closed(_ channel: any Channel) {
        // Settling closes the channel, which lands here: nothing is left to say by then.
        guard stage != .done, channel === self.channel else { return }
        finish(
            failure: ProbeFailure(
                .connectionReset,
                phase: phase,
                detail: "the server closed the connection before answering"
            )
        )
    }

    private func timedOut() {
        let phase = self.phase
        finish(
            failure: ProbeFailure(
                .timeout,
                phase: phase,
                detail: "no complete answer before the deadline (stuck in \(phase.rawValue))"
            )
        )
    }

    private var phase: ProbePhase {
        switch stage {
        case .connecting, .done: .connect
        case .handshaking: .tls
        case .awaitingHead: .head
        case .readingBody: .body
        }
    }

    private func finish(failure: ProbeFailure) {
        timings.total = elapsed
        settle(ProbeResult(target: target.name, failure: failure, timings: timings))
    }

    private func settle(_ outcome: ProbeResult) {
        guard stage != .done else { return }
        stage = .done
        deadline?.cancel()
        deadline = nil
        channel?.close(promise: nil)
        channel = nil
        // A plain-HTTP probe's result goes as it is, not copied to add nothing.
        if let certificate {
            whenDone(Self.presenting(certificate, in: outcome))
        } else {
            whenDone(outcome)
        }
    }

    /// `outcome` with the chain the server presented, and an expired chain named as the failure's cause.
    private static func presenting(_ certificate: ServerCertificate, in outcome: ProbeResult) -> ProbeResult {
        var outcome = outcome
        outcome.certificate = certificate
        outcome.failure = outcome.failure.map { TLSComplaint.explained($0, presenting: certificate, now: .now()) }
        return outcome
    }
}

extension HTTPExchange {
    /// Runs the exchange over a channel that is already connected, with the handlers ``start()``
    /// installs, and without a deadline: for ``HTTPProber/exchange(_:over:whenDone:)``.
    func run(over channel: any Channel) throws {
        loop.assertInEventLoop()
        try configure(channel.pipeline.syncOperations)
        connected(channel)
    }
}

extension HTTPExchange: NIOScheduledCallbackHandler {
    /// The deadline: a callback on ``loop``, which NIO runs without a promise.
    func handleScheduledCallback(eventLoop: some EventLoop) {
        deadline = nil
        timedOut()
    }
}

/// Hands what one connection sees to its ``HTTPExchange``: the TLS handshake's end and the chain
/// the server presented, the answer read from the bytes (``HTTPResponseReader``), errors and the close.
final class HTTPExchangeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let exchange: HTTPExchange
    private var reader = HTTPResponseReader()
    /// What the TLS verifier was shown, until the handshake's end hands it over; `nil` for plain
    /// HTTP, and once handed over.
    var chain: PresentedChain?

    init(exchange: HTTPExchange, watchesChain: Bool) {
        self.exchange = exchange
        self.chain = watchesChain ? PresentedChain() : nil
    }

    /// Hands the chain over once, with the leaf as the handshake left it.
    private func handOverChain(_ context: ChannelHandlerContext) {
        guard let seen = chain else { return }
        chain = nil
        if let certificate = seen.certificate(on: context.pipeline.syncOperations) {
            exchange.presented(certificate, on: context.channel)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = Self.unwrapInboundIn(data)
        do {
            while let part = try reader.next(from: &bytes) {
                exchange.received(part, on: context.channel)
            }
        } catch {
            exchange.failed(error, on: context.channel)
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            handOverChain(context)
            exchange.handshakeCompleted(on: context.channel)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        handOverChain(context)
        exchange.failed(error, on: context.channel)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A body that runs to the close ends here; one cut short is not an HTTP answer.
        do {
            if let end = try reader.closed() { exchange.received(end, on: context.channel) }
        } catch {
            exchange.failed(error, on: context.channel)
        }
        exchange.closed(context.channel)
    }
}
