import NIOCore
import NIOHTTP1

/// Sends a plan's request as the bytes NIOHTTP1's encoder made of it once (see
/// ``HTTPRequestPlan/encodedRequest``), in place of the encoder.
///
/// It sits between the transport (or TLS) and the response decoder, which still sees the request
/// head go by, as it must to pair the answer with a request. A probe's request has no body, so a
/// body or end part has nothing left to send.
final class EncodedRequestWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = ByteBuffer

    private let encodedRequest: ByteBuffer

    init(encodedRequest: ByteBuffer) {
        self.encodedRequest = encodedRequest
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch Self.unwrapOutboundIn(data) {
        case .head: context.write(Self.wrapOutboundOut(encodedRequest), promise: promise)
        case .body, .end: promise?.succeed()
        }
    }
}
