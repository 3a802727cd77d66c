import NIOCore

/// Hands a `dns` probe's UDP answers to its exchange: each datagram whole, and any error the
/// socket reports (a refusal, as the ICMP port unreachable of a stopped resolver comes back).
final class DNSDatagramHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let answered: @Sendable ([UInt8]) -> Void
    private let failed: @Sendable (any Error) -> Void

    init(answered: @escaping @Sendable ([UInt8]) -> Void, failed: @escaping @Sendable (any Error) -> Void) {
        self.answered = answered
        self.failed = failed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var envelope = unwrapInboundIn(data)
        answered(envelope.data.readBytes(length: envelope.data.readableBytes) ?? [])
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failed(error)
    }
}

/// Hands a `dns` probe's TCP answer to its exchange once it is whole (RFC 7766: a two-byte
/// length, then the message); a stream that ends before is ``EndedEarly``.
final class DNSStreamHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    /// The connection closed before the answer's length was read.
    struct EndedEarly: Error {}

    private let answered: @Sendable ([UInt8]) -> Void
    private let failed: @Sendable (any Error) -> Void
    private var received: ByteBuffer?
    private var done = false

    init(answered: @escaping @Sendable ([UInt8]) -> Void, failed: @escaping @Sendable (any Error) -> Void) {
        self.answered = answered
        self.failed = failed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard !done else { return }
        if received == nil { received = bytes } else { received!.writeBuffer(&bytes) }
        guard let length = received?.getInteger(at: received!.readerIndex, as: UInt16.self),
            received!.readableBytes >= 2 + Int(length)
        else { return }
        done = true
        received!.moveReaderIndex(forwardBy: 2)
        answered(received!.readBytes(length: Int(length)) ?? [])
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            failed(EndedEarly())
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !done else { return }
        done = true
        failed(error)
    }
}
