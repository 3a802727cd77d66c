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
    /// | Body bytes past ``maxBodyBytes`` actually sent (chunked, or a lying length) | connection closed |
    /// | Nothing read for ``idleTimeout`` between requests, or a request that stalls mid-way | connection closed |
    /// | More than ``maxConnections`` open connections | new ones wait in the kernel's backlog |
    ///
    /// A response in progress (an event stream) is never idle: the timeout applies only while the
    /// server waits for the client.
    public struct Limits: Sendable, Hashable {
        /// How long a connection may sit without sending a complete request part while no response is
        /// being written; `nil` keeps idle connections forever.
        public var idleTimeout: Duration?
        /// The largest header block (all fields) and the largest single field.
        public var maxHeaderBytes: Int
        /// The most header fields in one request.
        public var maxHeaderCount: Int
        /// The largest request body accepted; no route reads one.
        public var maxBodyBytes: Int
        /// The most connections open at once; past it the server stops accepting until one closes.
        /// The default, 2,048, lets the TCP and Unix-socket listeners together hold at most half of
        /// the unit's 8,192 descriptors: a flood of clients must not leave probes without sockets,
        /// which would read as "disconnected".
        public var maxConnections: Int

        public init(
            idleTimeout: Duration? = .seconds(60), maxHeaderBytes: Int = 16 * 1024, maxHeaderCount: Int = 100,
            maxBodyBytes: Int = 64 * 1024, maxConnections: Int = 2048
        ) {
            precondition(maxHeaderBytes > 0 && maxHeaderCount > 0 && maxBodyBytes >= 0 && maxConnections > 0, "limits must be positive")
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
                    maxHeaderFieldSize: maxHeaderBytes, maxHeaderListSize: maxHeaderBytes, maxHeaderFieldCount: maxHeaderCount))
        }
    }
}

/// Answers `413` to a request that announces a body larger than the limit, before any route runs,
/// and asks the client to close: Hummingbird would otherwise read and discard the body.
struct BodyLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let maxBodyBytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let text = request.headers[.contentLength], let length = Int(text), length > maxBodyBytes {
            throw APIError(
                .contentTooLarge, "request bodies are limited to \(maxBodyBytes) bytes; no endpoint takes one",
                headers: [.connection: "close"])
        }
        return try await next(request, context)
    }
}

/// Closes the connection once a request's body passes the limit, whatever its headers said: the
/// bytes a lying or chunked client sends are never kept, and are not read forever either.
final class BodyLimitHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let maxBodyBytes: Int
    private var received = 0

    init(maxBodyBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            received = 0
        case .body(let buffer):
            received += buffer.readableBytes
            if received > maxBodyBytes {
                context.close(promise: nil)
                return
            }
        case .end:
            received = 0
        }
        context.fireChannelRead(data)
    }
}
