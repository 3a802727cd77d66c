import NIOCore

/// Hands the outcome of the first write on an HTTPS connection ``ProbeSocket`` connected (TLS's
/// ClientHello) to its ``HTTPExchange``: that write leaves only once the connect has finished, so
/// its outcome is the connect's. A plain-HTTP exchange watches its request's write itself.
///
/// It sits at the bottom of the pipeline, below TLS; after the first write it passes everything
/// through.
final class ConnectWatcher: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer

    private var exchange: HTTPExchange?

    init(exchange: HTTPExchange) {
        self.exchange = exchange
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard let exchange else { return context.write(data, promise: promise) }
        self.exchange = nil
        let written = exchange.firstWrite(on: context.channel)
        if let promise { written.futureResult.cascade(to: promise) }
        context.write(data, promise: written)
    }
}
