import COpenSSL
import NIOCore

/// TLS for the status API client on the system's OpenSSL, through memory BIOs: bytes from the
/// network go into OpenSSL, plaintext comes out for the HTTP handlers, and the other way round.
///
/// reachctl and ReachKit speak to an `https://` reachd with it instead of NIOSSL, which would
/// link a second TLS library (BoringSSL) into every small client for a handful of requests; libssl
/// is on every host already. It verifies the server's certificate against the CA file given, or
/// the system's store, and its name (or IP address) against the endpoint's host; TLS 1.2 at least.
final class ClientTLSHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let context: OpaquePointer
    private let connection: OpaquePointer
    private let incoming: OpaquePointer
    private let outgoing: OpaquePointer
    private var handshakeDone = false
    private var pending: [(ByteBuffer, EventLoopPromise<Void>?)] = []

    /// - Parameters:
    ///   - host: The name or IP address the certificate must be for.
    ///   - caFile: PEM CA certificates to trust instead of the system's store.
    /// - Throws: ``ClientTLSError`` when OpenSSL cannot be set up or the CA file cannot be read.
    init(host: String, caFile: String?) throws(ClientTLSError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw ClientTLSError.last("cannot set up TLS") }
        self.context = context
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        _ = reachd_ssl_ctx_set_minimum_tls12(context)
        let trusted =
            caFile.map { SSL_CTX_load_verify_locations(context, $0, nil) } ?? SSL_CTX_set_default_verify_paths(context)
        guard trusted == 1, let connection = SSL_new(context) else {
            let error = ClientTLSError.last(
                caFile.map { "cannot read the CA file \($0)" } ?? "cannot read the system's CA certificates"
            )
            SSL_CTX_free(context)
            throw error
        }
        self.connection = connection
        incoming = BIO_new(BIO_s_mem())!
        outgoing = BIO_new(BIO_s_mem())!
        SSL_set_bio(connection, incoming, outgoing)
        SSL_set_connect_state(connection)
        if host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(connection), host)
        } else {
            SSL_set1_host(connection, host)
            _ = reachd_ssl_set_server_name(connection, host)
        }
    }

    deinit {
        SSL_free(connection)  // and both BIOs with it
        SSL_CTX_free(context)
    }

    func channelActive(context: ChannelHandlerContext) {
        handshake(context: context)
        context.fireChannelActive()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { handshake(context: context) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        bytes.withUnsafeReadableBytes { raw in _ = BIO_write(incoming, raw.baseAddress, Int32(raw.count)) }
        if !handshakeDone {
            handshake(context: context)
            guard handshakeDone else { return }
        }
        readPlaintext(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !handshakeDone {
            context.fireErrorCaught(
                ClientTLSError(description: "the server closed the connection during the TLS handshake")
            )
        }
        failPending(ClientTLSError(description: "the connection closed"))
        context.fireChannelInactive()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        pending.append((unwrapOutboundIn(data), promise))
        if handshakeDone { writePending(context: context) }
    }

    func flush(context: ChannelHandlerContext) {
        if handshakeDone { writePending(context: context) }
    }

    private func handshake(context: ChannelHandlerContext) {
        guard !handshakeDone else { return }
        ERR_clear_error()
        let result = SSL_do_handshake(connection)
        sendOutgoing(context: context)
        if result == 1 {
            handshakeDone = true
            writePending(context: context)
            return
        }
        guard SSL_get_error(connection, result) == SSL_ERROR_WANT_READ else {
            fail(context: context, handshakeError())
            return
        }
    }

    /// Why the handshake failed: the certificate's verification result when that was it.
    private func handshakeError() -> ClientTLSError {
        let verification = SSL_get_verify_result(connection)
        if verification != Int(X509_V_OK) {
            return ClientTLSError(
                description:
                    "the server's certificate is not trusted: \(String(cString: X509_verify_cert_error_string(verification)))"
            )
        }
        return ClientTLSError.last("the TLS handshake failed")
    }

    private func readPlaintext(context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: 16_384)
        while true {
            buffer.clear()
            ERR_clear_error()
            var result: Int32 = 0
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 16_384) { raw in
                result = SSL_read(connection, raw.baseAddress, Int32(raw.count))
                return Int(max(0, result))
            }
            if result > 0 {
                context.fireChannelRead(wrapInboundOut(buffer))
                continue
            }
            switch SSL_get_error(connection, result) {
            case SSL_ERROR_WANT_READ:
                sendOutgoing(context: context)
                return
            case SSL_ERROR_ZERO_RETURN:
                context.close(promise: nil)
                return
            default:
                fail(context: context, ClientTLSError.last("TLS failed"))
                return
            }
        }
    }

    private func writePending(context: ChannelHandlerContext) {
        guard !pending.isEmpty else { return }
        let writes = pending
        pending = []
        var promises: [EventLoopPromise<Void>] = []
        for (bytes, promise) in writes {
            if bytes.readableBytes > 0 {
                let written = bytes.withUnsafeReadableBytes { raw in
                    SSL_write(connection, raw.baseAddress, Int32(raw.count))
                }
                guard written == Int32(bytes.readableBytes) else {
                    let error = ClientTLSError.last("TLS failed to write")
                    promise?.fail(error)
                    failPending(error)
                    fail(context: context, error)
                    return
                }
            }
            if let promise { promises.append(promise) }
        }
        let sent = sendOutgoing(context: context)
        for promise in promises { promise.completeWith(sent) }
    }

    /// Hands what OpenSSL has written for the network to the channel, flushed.
    @discardableResult
    private func sendOutgoing(context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let waiting = Int(BIO_ctrl_pending(outgoing))
        guard waiting > 0 else { return context.eventLoop.makeSucceededVoidFuture() }
        var buffer = context.channel.allocator.buffer(capacity: waiting)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: waiting) { raw in
            Int(max(0, BIO_read(outgoing, raw.baseAddress, Int32(waiting))))
        }
        return context.writeAndFlush(wrapOutboundOut(buffer))
    }

    private func fail(context: ChannelHandlerContext, _ error: ClientTLSError) {
        failPending(error)
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }

    private func failPending(_ error: ClientTLSError) {
        let writes = pending
        pending = []
        for (_, promise) in writes { promise?.fail(error) }
    }
}

/// TLS to reachd failed: the words OpenSSL or the certificate check gave.
struct ClientTLSError: Error, CustomStringConvertible {
    let description: String

    /// `what`, with OpenSSL's reason for the error it last queued.
    static func last(_ what: String) -> ClientTLSError {
        let code = ERR_get_error()
        guard code != 0 else { return ClientTLSError(description: what) }
        var text = [UInt8](repeating: 0, count: 256)
        text.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { ERR_error_string_n(code, $0.baseAddress, $0.count) }
        }
        return ClientTLSError(description: "\(what): \(String(decoding: text.prefix { $0 != 0 }, as: UTF8.self))")
    }
}
