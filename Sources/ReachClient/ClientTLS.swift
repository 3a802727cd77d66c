import COpenSSL
import Glibc

/// TLS for the status API client on the system's OpenSSL, over the connection's own socket.
///
/// reachctl and ReachKit speak to an `https://` reachd with it instead of NIOSSL, which would
/// link a second TLS library (BoringSSL) into every small client for a handful of requests; libssl
/// is on every host already. It verifies the server's certificate against the CA file given, or
/// the system's store, and its name (or IP address) against the endpoint's host; TLS 1.2 at least.
final class ClientTLS {
    private let context: OpaquePointer
    private let connection: OpaquePointer

    /// - Parameters:
    ///   - descriptor: The connected, non-blocking socket, which stays the caller's to close.
    ///   - host: The name or IP address the certificate must be for.
    ///   - caFile: PEM CA certificates to trust instead of the system's store.
    /// - Throws: ``ClientTLSError`` when OpenSSL cannot be set up or the CA file cannot be read.
    init(descriptor: Int32, host: String, caFile: String?) throws(ClientTLSError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw ClientTLSError.last("cannot set up TLS") }
        self.context = context
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        _ = reachd_ssl_ctx_set_minimum_tls12(context)
        // SSL_OP_IGNORE_UNEXPECTED_EOF (a macro Swift cannot import): a stream closed without TLS's
        // close_notify reads as its end, and the HTTP answer says whether it was whole.
        SSL_CTX_set_options(context, 1 << 7)
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
        SSL_set_fd(connection, descriptor)
        SSL_set_connect_state(connection)
        if host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(connection), host)
        } else {
            SSL_set1_host(connection, host)
            _ = reachd_ssl_set_server_name(connection, host)
        }
    }

    deinit {
        SSL_free(connection)
        SSL_CTX_free(context)
    }

    /// Shakes hands, calling `wait` with the poll events the socket must be ready for whenever
    /// OpenSSL needs it to be.
    func handshake(wait: (Int16) throws(ReachdConnection.Failure) -> Void) throws(ReachdConnection.Failure) {
        while true {
            ERR_clear_error()
            let result = SSL_do_handshake(connection)
            if result == 1 { return }
            switch SSL_get_error(connection, result) {
            case SSL_ERROR_WANT_READ: try wait(Int16(POLLIN))
            case SSL_ERROR_WANT_WRITE: try wait(Int16(POLLOUT))
            case SSL_ERROR_ZERO_RETURN:
                throw .tls(ClientTLSError(description: "the server closed the connection during the TLS handshake"))
            case SSL_ERROR_SYSCALL where ERR_peek_error() == 0:
                throw .tls(ClientTLSError(description: "the server closed the connection during the TLS handshake"))
            default: throw .tls(handshakeError())
            }
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

    /// Plaintext into `buffer`: its count, 0 at the end of the stream, or a wait.
    func read(_ buffer: UnsafeMutableRawBufferPointer) -> SocketResult {
        ERR_clear_error()
        let result = SSL_read(connection, buffer.baseAddress, Int32(clamping: buffer.count))
        if result > 0 { return .done(Int(result)) }
        switch SSL_get_error(connection, result) {
        case SSL_ERROR_WANT_READ: return .want(Int16(POLLIN))
        case SSL_ERROR_WANT_WRITE: return .want(Int16(POLLOUT))
        case SSL_ERROR_ZERO_RETURN: return .done(0)
        default: return .failed(ClientTLSError.last("TLS failed"))
        }
    }

    /// Writes plaintext from `bytes`: the count written, or a wait.
    func write(_ bytes: UnsafeRawBufferPointer) -> SocketResult {
        ERR_clear_error()
        let result = SSL_write(connection, bytes.baseAddress, Int32(clamping: bytes.count))
        if result > 0 { return .done(Int(result)) }
        switch SSL_get_error(connection, result) {
        case SSL_ERROR_WANT_READ: return .want(Int16(POLLIN))
        case SSL_ERROR_WANT_WRITE: return .want(Int16(POLLOUT))
        default: return .failed(ClientTLSError.last("TLS failed to write"))
        }
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
