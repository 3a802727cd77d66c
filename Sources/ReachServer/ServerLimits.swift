import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

extension StatusServer {
    /// What one client may cost the server: the bounds that keep malformed requests, huge headers,
    /// lying bodies and piles of idle connections from growing reachd's memory.
    ///
    /// | Abuse | Answer |
    /// |---|---|
    /// | Malformed request line or header | `400` (empty body) and the connection closes (Hummingbird) |
    /// | Header block over ``maxHeaderBytes`` or more than ``maxHeaderCount`` fields | `400` and close |
    /// | `Content-Length` over ``maxBodyBytes`` (no route takes a body) | `413` (JSON error), `Connection: close` |
    /// | Body bytes past ``maxBodyBytes`` actually sent (chunked, or a lying length) | the rest is dropped; the connection closes after the answer |
    /// | Nothing read for ``idleTimeout`` between requests, or a request that stalls mid-way | connection closed |
    /// | More than ``maxConnections`` open connections | new ones wait in the kernel's backlog |
    ///
    /// A response in progress (an event stream) is never idle: the timeout applies only while the
    /// server waits for the client.
    package struct Limits: Sendable, Hashable {
        /// How long a connection may sit without sending a complete request part while no response is
        /// being written; `nil` keeps idle connections forever.
        package var idleTimeout: Duration?
        /// The largest header block (all fields) and the largest single field.
        package var maxHeaderBytes: Int
        /// The most header fields in one request.
        package var maxHeaderCount: Int
        /// The largest request body accepted; no route reads one.
        package var maxBodyBytes: Int
        /// The most connections open at once; past it the server stops accepting until one closes.
        /// The default, 2,048, lets the TCP and Unix-socket listeners together hold at most half of
        /// the unit's 8,192 descriptors: a flood of clients must not leave probes without sockets,
        /// which would read as "disconnected".
        package var maxConnections: Int

        package init(
            idleTimeout: Duration? = .seconds(60),
            maxHeaderBytes: Int = 16 * 1024,
            maxHeaderCount: Int = 100,
            maxBodyBytes: Int = 64 * 1024,
            maxConnections: Int = 2048
        ) {
            precondition(
                maxHeaderBytes > 0 && maxHeaderCount > 0 && maxBodyBytes >= 0 && maxConnections > 0,
                "limits must be positive"
            )
            self.idleTimeout = idleTimeout
            self.maxHeaderBytes = maxHeaderBytes
            self.maxHeaderCount = maxHeaderCount
            self.maxBodyBytes = maxBodyBytes
            self.maxConnections = maxConnections
        }

        var http1: HTTP1Channel.Configuration {
            let maxBodyBytes = self.maxBodyBytes
            return HTTP1Channel.Configuration(
                additionalChannelHandlers: [BodyLimitHandler(maxBodyBytes: maxBodyBytes)],
                idleTimeout: idleTimeout.map { TimeAmount.nanoseconds(Int64($0 / .nanoseconds(1))) },
                httpDecoderConfiguration: .init(
                    maxHeaderFieldSize: maxHeaderBytes,
                    maxHeaderListSize: maxHeaderBytes,
                    maxHeaderFieldCount: maxHeaderCount
                )
            )
        }
    }
}

/// Answers `413` to a request that announces a body larger than the limit, before any route runs,
/// and asks the client to close: Hummingbird would otherwise read and discard the body.
struct BodyLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let maxBodyBytes: Int

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let text = request.headers[.contentLength], let length = Int(text), length > maxBodyBytes {
            throw APIError(
                .contentTooLarge,
                "request bodies are limited to \(maxBodyBytes) bytes; no endpoint takes one",
                headers: [.connection: "close"]
            )
        }
        return try await next(request, context)
    }
}

/// Stops taking a request's body once it passes the limit, whatever its headers said: the bytes a
/// lying or chunked client sends are never kept, and are not read forever either.
///
/// A request that announced its oversized body gets its `413` (from ``BodyLimitMiddleware``), and the
/// close after it is staged, as nginx's lingering close: the output is shut first, then what the
/// client is still sending is read and thrown away for a moment (at most ``lingerTime`` and
/// ``lingerBytes``). Closing at once would reset the connection under a client busy sending its
/// body, and the reset discards the `413` it has not read yet. A body that passes the limit without
/// having announced it closes the connection at once.
final class BodyLimitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    static let lingerTime: TimeAmount = .seconds(1)
    static let lingerBytes = 64 * 1024

    private enum State {
        case reading
        /// Past the limit with the `413` still to be written: nothing more is read until it is out.
        case awaitingAnswer
        /// The answer is out and the output shut: reading only to discard, until the close.
        case lingering(discarded: Int, close: Scheduled<Void>)
    }

    private let maxBodyBytes: Int
    private var received = 0
    private var announcedTooLarge = false
    private var answered = false
    private var state = State.reading

    init(maxBodyBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch state {
        case .reading:
            break
        case .awaitingAnswer:
            return
        case .lingering(let discarded, let close):
            guard case .body(let buffer) = unwrapInboundIn(data) else { return }
            state = .lingering(discarded: discarded + buffer.readableBytes, close: close)
            if discarded + buffer.readableBytes > Self.lingerBytes { context.close(promise: nil) }
            return
        }
        switch unwrapInboundIn(data) {
        case .head(let head):
            received = 0
            answered = false
            announcedTooLarge = head.headerFields[.contentLength].flatMap { Int($0) }.map { $0 > maxBodyBytes } ?? false
        case .body(let buffer):
            received += buffer.readableBytes
            if received > maxBodyBytes {
                if answered {
                    linger(context: context)
                } else if announcedTooLarge {
                    state = .awaitingAnswer
                } else {
                    context.close(promise: nil)
                }
                return
            }
        case .end:
            received = 0
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        if case .awaitingAnswer = state { return }
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        answered = true
        guard announcedTooLarge else {
            context.write(data, promise: promise)
            return
        }
        // The 413 is out: the body it refused is not wanted, whether or not it has passed the limit yet.
        let written = promise ?? context.eventLoop.makePromise()
        context.write(data, promise: written)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in bound.value.0.linger(context: bound.value.1) }
    }

    /// Shuts the output, then reads and discards until ``lingerTime`` or ``lingerBytes`` runs out.
    private func linger(context: ChannelHandlerContext) {
        if case .lingering = state { return }
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let close = context.eventLoop.scheduleTask(in: Self.lingerTime) { bound.value.close(promise: nil) }
        state = .lingering(discarded: 0, close: close)
        context.close(mode: .output, promise: nil)
        context.read()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .lingering(_, let close) = state { close.cancel() }
        context.fireChannelInactive()
    }
}
