import NIOCore
import NIOHTTP1
import NIOPosix

/// One request to reachd's status API on SwiftNIO alone: a TCP or unix-socket connection, HTTP/1.1
/// from NIOHTTP1, the body of a `200` handed over as it arrives, then the connection closed.
///
/// A client needs one request at a time: no HTTP/2 or connection pool, and TLS for an `https://`
/// endpoint from the system's OpenSSL (``ClientTLSHandler``). Not linking an HTTP client or TLS
/// library that brings them is what keeps reachctl and an idle program small (the Swift runtime touches every linked module's
/// metadata at start, so each one costs private memory whether it is used or not).
struct ReachdRequest: Sendable {
    let endpoint: ReachdEndpoint
    var method: HTTPMethod = .GET
    let path: String
    var headers: [(String, String)] = []
    let connectTimeout: Duration
    /// How long the answer may go without a byte before the request fails as silent.
    let silenceLimit: Duration

    private typealias Connection = NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>

    /// The most of an error answer's body read, for its message.
    private static let errorBodyLimit = 64 << 10

    /// Sends the request and hands each part of a `200` answer's body to `body`; returns when the
    /// answer is complete.
    ///
    /// - Throws: ``ReachdClientError`` for an endpoint that cannot be used, an answer other than
    ///   `200`, one cut short, silence, a connection that could not be made or broke; or what `body` throws.
    func run(_ body: (ByteBuffer) async throws -> Void) async throws {
        let address: ReachdEndpoint.Address
        do {
            address = try endpoint.address()
        } catch {
            throw ReachdClientError.endpoint(error)
        }
        let silence = TimeAmount(silenceLimit)
        let caFile = endpoint.caFile
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(
            .init(connectTimeout)
        )
        let initializer: @Sendable (any Channel) -> EventLoopFuture<Connection> = { channel in
            channel.eventLoop.makeCompletedFuture {
                let pipeline = channel.pipeline.syncOperations
                try pipeline.addHandler(IdleStateHandler(readTimeout: silence))
                if case .tcp(let host, _, tls: true) = address {
                    try pipeline.addHandler(ClientTLSHandler(host: host, caFile: caFile))
                }
                try pipeline.addHTTPClientHandlers()
                try pipeline.addHandler(SilenceHandler())
                return try Connection(wrappingChannelSynchronously: channel)
            }
        }
        let connection: Connection
        do {
            connection =
                switch address {
                case .tcp(let host, let port, _):
                    try await bootstrap.connect(host: host, port: port, channelInitializer: initializer)
                case .unixSocket(let path):
                    try await bootstrap.connect(unixDomainSocketPath: path, channelInitializer: initializer)
                }
        } catch {
            throw ReachdClientError.unreachable(endpoint, error)
        }
        try await connection.executeThenClose { inbound, outbound in
            var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
            head.headers.add(name: "Host", value: address.hostHeader)
            if let authorization = endpoint.authorization {
                head.headers.add(name: "Authorization", value: authorization)
            }
            head.headers.add(contentsOf: headers)
            if method == .POST { head.headers.add(name: "Content-Length", value: "0") }
            var refusal: (status: HTTPResponseStatus, body: ByteBuffer)?
            do {
                try await outbound.write(.head(head))
                try await outbound.write(.end(nil))
                for try await part in inbound {
                    switch part {
                    case .head(let answer) where answer.status != .ok:
                        refusal = (answer.status, ByteBuffer())
                    case .head:
                        continue
                    case .body(var chunk):
                        if refusal != nil {
                            if refusal!.body.readableBytes < Self.errorBodyLimit { refusal!.body.writeBuffer(&chunk) }
                        } else {
                            do {
                                try await body(chunk)
                            } catch {
                                throw FromBody(error: error)
                            }
                        }
                    case .end:
                        if let refusal {
                            throw ReachdClientError.refused(
                                endpoint,
                                method.rawValue,
                                path,
                                refusal.status,
                                body: refusal.body
                            )
                        }
                        return
                    }
                }
            } catch let error as FromBody {
                throw error.error
            } catch let error as ReachdClientError {
                throw error
            } catch is ReachdSilence {
                throw ReachdClientError.broke(endpoint, path, "it went silent for \(silenceLimit)")
            } catch  where Task.isCancelled {
                throw CancellationError()
            } catch {
                throw ReachdClientError.broke(endpoint, path, ReachdClientError.reason(error))
            }
            try Task.checkCancellation()
            throw ReachdClientError.broke(endpoint, path, "reachd closed the connection")
        }
    }
}

/// What the caller's body threw, carried past the transport's own errors unchanged.
struct FromBody: Error {
    let error: any Error
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
