import NIOSSL

/// NIOSSL's client handler with a per-certificate verification callback that only watches: it
/// returns BoringSSL's own verdict unchanged, so verification is exactly what it is without it.
///
/// That callback's initializer is deprecated in favour of `customVerificationCallback`, which
/// *replaces* verification (reachd would then verify chains itself); the watching form is the
/// one NIOSSL offers for seeing the chain of a handshake that fails. It is called through a
/// protocol requirement, which is how a deprecated API is used without a warning.
enum ChainWatchingTLS {
    /// - Parameter see: Called on the channel's event loop, during the handshake, with each
    ///   certificate the verifier is shown.
    static func clientHandler(
        context: NIOSSLContext,
        serverHostname: String?,
        see: @escaping (NIOSSLCertificate) -> Void
    ) throws -> NIOSSLClientHandler {
        let maker: any TLSClientHandlerMaking.Type = WatchingVerification.self
        return try maker.clientHandler(context: context, serverHostname: serverHostname, see: see)
    }
}

private protocol TLSClientHandlerMaking {
    static func clientHandler(
        context: NIOSSLContext,
        serverHostname: String?,
        see: @escaping (NIOSSLCertificate) -> Void
    ) throws -> NIOSSLClientHandler
}

private enum WatchingVerification: TLSClientHandlerMaking {
    @available(
        *,
        deprecated,
        message: "uses NIOSSL's deprecated per-certificate callback; call ChainWatchingTLS.clientHandler"
    )
    static func clientHandler(
        context: NIOSSLContext,
        serverHostname: String?,
        see: @escaping (NIOSSLCertificate) -> Void
    ) throws -> NIOSSLClientHandler {
        try NIOSSLClientHandler(
            context: context,
            serverHostname: serverHostname,
            verificationCallback: { preverified, certificate in
                see(certificate)
                return preverified
            }
        )
    }
}
