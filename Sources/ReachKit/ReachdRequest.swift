import NIOCore
import NIOHTTP1
import NIOPosix

/// One `GET` to reachd's status API, on SwiftNIO alone: a TCP or unix-socket connection, HTTP/1.1
/// from NIOHTTP1, the body handed over as it arrives, then the connection closed.
///
/// reachd serves plain HTTP on loopback or a unix socket, and a following program needs one
/// request at a time: no TLS, HTTP/2 or connection pool. Not linking an HTTP client that brings
/// them is what keeps an idle program small (the Swift runtime touches every linked module's
/// metadata at start, so each one costs private memory whether it is used or not).
struct ReachdRequest: Sendable {
    let endpoint: ReachdEndpoint
    let path: String
    var headers: [(String, String)] = []
    let connectTimeout: Duration
    /// How long the answer may go without a byte before the request fails with ``ReachdSilence``.
    let silenceLimit: Duration

    private typealias Connection = NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>

    /// Sends the request and hands each part of a `200` answer's body to `body`; returns when the
    /// answer is complete.
    ///
    /// - Throws: ``ReachdAnswer`` for any other status or an answer cut short, ``ReachdSilence``,
    ///   ``ReachdEndpointError``, or NIO's connection errors.
    func run(_ body: (ByteBuffer) async throws -> Void) async throws {
        let address = try endpoint.address()
        let silence = TimeAmount(silenceLimit)
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(.init(connectTimeout))
        let initializer: @Sendable (any Channel) -> EventLoopFuture<Connection> = { channel in
            channel.eventLoop.makeCompletedFuture {
                let pipeline = channel.pipeline.syncOperations
                try pipeline.addHandler(IdleStateHandler(readTimeout: silence))
                try pipeline.addHTTPClientHandlers()
                try pipeline.addHandler(SilenceHandler())
                return try Connection(wrappingChannelSynchronously: channel)
            }
        }
        let connection =
            switch address {
            case .tcp(let host, let port): try await bootstrap.connect(host: host, port: port, channelInitializer: initializer)
            case .unixSocket(let path): try await bootstrap.connect(unixDomainSocketPath: path, channelInitializer: initializer)
            }
        try await connection.executeThenClose { inbound, outbound in
            var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
            head.headers.add(name: "Host", value: address.hostHeader)
            if let token = endpoint.token { head.headers.add(name: "Authorization", value: "Bearer \(token)") }
            head.headers.add(contentsOf: headers)
            try await outbound.write(.head(head))
            try await outbound.write(.end(nil))
            for try await part in inbound {
                switch part {
                case .head(let answer) where answer.status != .ok:
                    throw ReachdAnswer(description: "reachd at \(endpoint.base) answered GET \(path) with \(answer.status)")
                case .head: continue
                case .body(let chunk): try await body(chunk)
                case .end: return
                }
            }
            try Task.checkCancellation()
            throw ReachdAnswer(description: "reachd at \(endpoint.base) closed the connection")
        }
    }
}

/// reachd answered, but not with what was asked (a wrong token, a proxy's page), or stopped answering.
struct ReachdAnswer: Error, CustomStringConvertible {
    let description: String
}

/// Nothing arrived for the silence limit (reachd frozen, or a peer that is not reachd).
struct ReachdSilence: Error {}

/// Turns the idle handler's "nothing read" into an error that the reader of the answer sees.
private final class SilenceHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        context.fireErrorCaught(ReachdSilence())
        context.close(promise: nil)
    }
}
