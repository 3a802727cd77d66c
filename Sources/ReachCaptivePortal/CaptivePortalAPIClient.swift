import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ReachCore
import ReachOutbound
import ReachPOSIX
import ReachSupport
import Synchronization

/// Asks a network's captive-portal API (RFC 8908) whether this machine is captive: one HTTPS
/// `GET` with `Accept: application/captive+json`, out of the interface the API was learned on.
///
/// Out of that interface (`SO_BINDTODEVICE`, which needs no privilege since Linux 5.7): the API is
/// the network's, and on a machine with two uplinks the routes may send it out of the other one.
package struct CaptivePortalAPIClient: Sendable {
    /// Why the API could not be asked; logged once, then the API is ignored until it answers.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// The largest answer read: the API's JSON is a few hundred bytes.
    static let bodyLimit = 64 << 10

    private let eventLoopGroup: any EventLoopGroup
    private let caFile: String?
    /// The one context it needs, made on the first ask (as the probes make theirs).
    private let tlsContexts = TLSContexts()

    /// - Parameter caFile: Extra CAs to trust (a private CA); the system store is trusted always.
    package init(caFile: String?, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.caFile = caFile
        self.eventLoopGroup = eventLoopGroup
    }

    /// The API's answer at `url`, asked out of `interface` (any, when `nil`), within `timeout`.
    package func answer(
        at url: String,
        interface: String?,
        timeout: Duration
    ) async throws(Failure) -> CaptivePortalAPIAnswer {
        guard let parts = HTTPURL(url), parts.isHTTPS else { throw Failure(description: "\(url) is not an https URL") }
        guard parts.userinfo == nil else {
            throw Failure(description: "\(url) has credentials in it, which would show in logs")
        }
        let body: [UInt8]
        do {
            body = try await withDeadline(timeout) { try await get(parts, interface: interface) }
        } catch let failure as Failure {
            throw failure
        } catch is DeadlineExceeded {
            throw Failure(description: "no answer within \(DurationText.format(timeout))")
        } catch {
            throw Failure(description: Self.words(error))
        }
        guard let answer = CaptivePortalAPIDocument.parse(body) else {
            throw Failure(description: "the answer is not captive-portal API JSON (RFC 8908)")
        }
        return answer
    }

    private func get(_ parts: HTTPURL, interface: String?) async throws -> [UInt8] {
        let tls: NIOSSLContext
        do {
            tls = try await tlsContexts.context(caFile: caFile)
        } catch {
            throw Failure(description: "cannot set up TLS: \(error)")
        }
        let loop = eventLoopGroup.any()
        let collector = ResponseCollector(limit: Self.bodyLimit, promise: loop.makePromise())
        do {
            return try await exchange(parts, interface: interface, tls: tls, on: loop, collector: collector)
        } catch {
            // Where the channel never got as far as its handlers, nothing else completes the promise.
            collector.response.fail(error)
            throw error
        }
    }

    private func exchange(
        _ parts: HTTPURL,
        interface: String?,
        tls: NIOSSLContext,
        on loop: any EventLoop,
        collector: ResponseCollector
    ) async throws -> [UInt8] {
        let serverName = IPAddress(parts.host) == nil ? parts.host : nil
        let channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                let bound = interface.map { channel.bind(toDevice: $0) } ?? channel.eventLoop.makeSucceededVoidFuture()
                return bound.flatMapThrowing {
                    let handler = try NIOSSLClientHandler(context: tls, serverHostname: serverName)
                    try channel.pipeline.syncOperations.addHandler(handler)
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(collector)
                }
            }
            .connect(host: parts.host, port: parts.port).get()
        defer { channel.close(promise: nil) }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: parts.hostHeader)
        headers.add(name: "Accept", value: "application/captive+json")
        headers.add(name: "User-Agent", value: "reachd/\(ReachVersion.current)")
        headers.add(name: "Connection", value: "close")
        channel.write(
            HTTPClientRequestPart.head(
                HTTPRequestHead(version: .http1_1, method: .GET, uri: parts.requestTarget, headers: headers)
            ),
            promise: nil
        )
        // A failed handshake fails the write too; the collector hears why (the TLS error) first.
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        let (status, body) = try await collector.response.futureResult.get()
        guard status == 200 else { throw Failure(description: "the API answered HTTP \(status)") }
        return body
    }

    private static func words(_ error: any Error) -> String {
        if let error = error as? NIOSSLError, case .handshakeFailed = error {
            return "the TLS handshake failed: \(error)"
        }
        if let error = error as? BoringSSLError { return "the TLS handshake failed: \(error)" }
        if let error = error as? DeviceBindingError { return error.description }
        if let error = error as? IOError { return SystemCallError.reason(error.errnoCode) }
        if error is NIOConnectionError { return "cannot connect" }
        return "\(error)"
    }
}

/// Collects one HTTP response's status and body (up to a limit) into a promise.
private final class ResponseCollector: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = HTTPClientResponsePart

    let response: EventLoopPromise<(status: Int, body: [UInt8])>
    private let limit: Int
    private let state = Mutex((status: 0, body: [UInt8]()))

    init(limit: Int, promise: EventLoopPromise<(status: Int, body: [UInt8])>) {
        self.limit = limit
        self.response = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            state.withLock { $0.status = Int(head.status.code) }
        case .body(let part):
            let overflow = state.withLock { state -> Bool in
                state.body += part.readableBytesView
                return state.body.count > limit
            }
            if overflow {
                response.fail(
                    CaptivePortalAPIClient.Failure(description: "the answer is larger than \(limit >> 10) KiB")
                )
                context.close(promise: nil)
            }
        case .end:
            response.succeed(state.withLock { $0 })
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        response.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        response.fail(
            CaptivePortalAPIClient.Failure(description: "the connection closed before the answer was complete")
        )
    }
}
