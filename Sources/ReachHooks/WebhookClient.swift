import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ReachOutbound
import ReachPOSIX
import ReachSupport

/// Sends webhooks' POSTs on SwiftNIO, as the probes and the captive-portal client make their
/// requests: a fresh connection per attempt (a webhook fires on a transition, seldom), TLS from
/// the contexts they share (the system's trust store), no redirects followed, the answer's status
/// read and its body dropped.
///
/// An HTTP client library would bring its connection pool, proxies, compression, tracing and
/// configuration packages into reachd for this one request (AsyncHTTPClient was 2.5 MB of it).
package final class WebhookClient: Sendable {
    private let tls = TLSContexts()

    private typealias Connection = NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>

    package init() {}

    /// A POST failed before its answer's status: why, in words for the log.
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// POSTs `body` with `headers` to `url`; returns the answer's status once its body has ended.
    /// The caller bounds the whole exchange (``WebhookSender``); `connectTimeout` bounds the connect.
    func post(_ url: HTTPURL, headers: [(String, String)], body: [UInt8], connectTimeout: Duration) async throws -> Int
    {
        let context = url.isHTTPS ? try await tls.context(caFile: nil) : nil
        let serverName = IPAddress(url.host) == nil ? url.host : nil
        let connection: Connection
        do {
            connection = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.init(connectTimeout))
                .connect(host: url.host, port: url.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let context {
                            try pipeline.addHandler(NIOSSLClientHandler(context: context, serverHostname: serverName))
                        }
                        try pipeline.addHTTPClientHandlers()
                        return try Connection(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw Failed(description: "cannot connect to \(url.hostHeader): \(Self.reason(error))")
        }
        return try await connection.executeThenClose { inbound, outbound in
            var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: url.requestTarget)
            head.headers.add(name: "Host", value: url.hostHeader)
            head.headers.add(contentsOf: headers)
            head.headers.add(name: "Content-Length", value: "\(body.count)")
            head.headers.add(name: "Connection", value: "close")
            var status: Int?
            do {
                try await outbound.write(.head(head))
                try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body))))
                try await outbound.write(.end(nil))
            } catch {
                // A write to a closed connection says only that; why it closed (a certificate
                // refused in the handshake, a reset) is what ended the answer's stream.
                throw Failed(
                    description:
                        "the answer from \(url.hostHeader) broke: \(Self.reason(await Self.whyItEnded(inbound) ?? error))"
                )
            }
            do {
                for try await part in inbound {
                    switch part {
                    case .head(let answer): status = Int(answer.status.code)
                    case .body: continue
                    case .end: if let status { return status }
                    }
                }
            } catch {
                throw Failed(description: "the answer from \(url.hostHeader) broke: \(Self.reason(error))")
            }
            throw Failed(description: "\(url.hostHeader) closed the connection before answering")
        }
    }

    /// The error the answer's stream ended with, if it ended with one.
    private static func whyItEnded(
        _ inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>
    ) async -> (any Error)? {
        do {
            for try await _ in inbound {}
            return nil
        } catch {
            return error
        }
    }

    /// A connection error in words: the system's reason for a socket call, or NIO's own for the rest.
    private static func reason(_ error: any Error) -> String {
        switch error {
        case ChannelError.connectTimeout: "connect timed out"
        case let error as IOError: SystemCallError.reason(error.errnoCode)
        case let error as NIOConnectionError:
            error.connectionErrors.first.map { reason($0.error) } ?? "cannot resolve the host"
        default: "\(error)"
        }
    }
}
