import GRPCNIOTransportHTTP2
import NIOCore
import NIOSSL
import NIOTLS
import ReachCore
import ReachSupport

/// TLS for a gRPC probe, set up by the probe itself rather than by the transport.
///
/// grpc-swift-nio-transport's own `.tls` adds NIOSSL's handler with no way to see the chain the
/// server presents, nor why a handshake failed (the call fails `unavailable`, "closed before the
/// HTTP/2 preface"). Its `.customSecure` leaves the TLS handlers to
/// `channelDebuggingCallbacks.onCreateTCPConnection`: there the probe puts the same chain-watching
/// NIOSSL handler the HTTPS probe uses (``ChainWatchingTLS``) in front of the gRPC pipeline, with
/// ALPN `grpc-exp`/`h2` and TLS 1.2 or later as the transport's own `.tls` has it, and a
/// ``GRPCHandshakeWatcher`` that tells the probe's tracker what the handshake saw.
struct GRPCTransportSecurity: Sendable {
    /// The client context for the target's CA bundle, with gRPC's ALPN.
    let context: NIOSSLContext
    /// The name sent in SNI and checked in the certificate; `nil` for an address, checked as such.
    let serverHostname: String?

    static let applicationProtocols = ["grpc-exp", "h2"]

    init(context: NIOSSLContext, settings: TLSSettings, endpoint: HostPort) {
        self.context = context
        let name = settings.serverName ?? endpoint.host
        serverHostname = IPAddress(name) == nil ? name : nil
    }

    /// Puts the TLS handler and its watcher in front of the connection's gRPC handlers.
    func install(on channel: any Channel, tracker: GRPCProbePhaseTracker) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            let watcher = GRPCHandshakeWatcher(tracker: tracker)
            try pipeline.addHandler(watcher, position: .first)
            try pipeline.addHandler(
                ChainWatchingTLS.clientHandler(context: context, serverHostname: serverHostname) {
                    watcher.chain?.saw($0)
                },
                position: .first
            )
        }
    }
}

/// Sits behind the TLS handler of one gRPC probe's connection: moves the probe to `tls` when the
/// TCP connection is up and to `head` when the handshake is done, and hands over the chain the
/// server presented and, when the handshake fails, why.
final class GRPCHandshakeWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let tracker: GRPCProbePhaseTracker
    /// What the TLS verifier was shown, until the handshake's end hands it over.
    var chain: PresentedChain? = PresentedChain()

    init(tracker: GRPCProbePhaseTracker) {
        self.tracker = tracker
    }

    func channelActive(context: ChannelHandlerContext) {
        tracker.advance(to: .tls)
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            handOverChain(context)
            tracker.advance(to: .head)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Only the handshake's failures: a TLS error after it (a close without close_notify) is
        // not why a call failed.
        if chain != nil, let failure = TLSComplaint.failure(error) {
            handOverChain(context)
            tracker.handshakeFailed(failure)
        }
        context.fireErrorCaught(error)
    }

    private func handOverChain(_ context: ChannelHandlerContext) {
        guard let seen = chain else { return }
        chain = nil
        if let certificate = seen.certificate(on: context.pipeline.syncOperations) { tracker.presented(certificate) }
    }
}
