import GRPCCore
import GRPCNIOTransportHTTP2
import Logging
import NIOCore
import ReachCore
import ReachPOSIX
import ReachSupport
import ServiceLifecycle

/// reachd's verdict over gRPC: a plaintext HTTP/2 server offering only the standard health
/// service, `grpc.health.v1.Health` (`Check`, `Watch`, `List`).
///
/// gRPC infrastructure already knows how to ask this service (`grpc_health_probe`, Kubernetes
/// gRPC probes, Envoy and other load balancers, grpcio's `HealthStub`), so exposing the verdict
/// through it lets those tools gate on the machine's connectivity with no reachd-specific client.
///
/// | Service            | `SERVING`              | `NOT_SERVING`             | `UNKNOWN`                  |
/// |--------------------|------------------------|---------------------------|----------------------------|
/// | `""` (the verdict) | state `connected`      | state `disconnected`      | state `unknown` (starting) |
/// | a target's name    | health `healthy`       | health `unhealthy`        | health `unknown`           |
///
/// Any other name is unknown: `Check` fails with `NOT_FOUND`, `Watch` sends `SERVICE_UNKNOWN` and
/// stays open. An `unknown` verdict is `UNKNOWN` rather than `NOT_SERVING`: every health client
/// treats anything but `SERVING` as not ready, so gating is unaffected, and a watcher can tell a
/// daemon that has not looked yet from a machine that lost its connection. `Watch` sends the
/// current status at once and then only changes of that service's status; a slow client costs
/// bounded memory (see the module's `HealthService`).
///
/// Run it as a ServiceLifecycle service. On graceful shutdown it first ends every open `Watch`
/// stream with status `OK` (a watch never ends on its own, so it would otherwise hold the
/// shutdown forever) and then stops accepting calls; ``run()`` returns once the calls in flight
/// have finished. Cancelling ``run()`` instead closes every connection at once.
///
/// ```swift
/// let grpc = GRPCHealthServer(monitor: monitor, host: "127.0.0.1", port: 50051, logger: logger)
/// let group = ServiceGroup(services: [monitorService, grpc], logger: logger)
/// ```
package final class GRPCHealthServer: Service, Sendable {
    private let server: GRPCServer<HTTP2ServerTransport.Posix>
    private let health: HealthService
    private let logger: Logger
    private let whenListening: @Sendable () -> Void

    /// Builds the server; nothing listens until ``run()``.
    ///
    /// - Parameters:
    ///   - monitor: Whose verdict to serve; the server only reads it.
    ///   - host: The address to bind: an IPv4 literal (`127.0.0.1`, `0.0.0.0`) or, when it
    ///     contains a colon, an IPv6 literal (`::1`, `::`). Literals only, because a server binds
    ///     an address, not a name.
    ///   - port: The TCP port; 0 lets the kernel choose one, which ``listeningPort`` then tells.
    ///   - bearerToken: When set, every call must carry `authorization: Bearer <token>` metadata
    ///     and is refused with `UNAUTHENTICATED` otherwise; mandatory when `host` is not loopback
    ///     (``ReachSupport/HostPort/listenerNeedsToken``; the configuration checks).
    ///   - maxConnections: The most connections open at once; a connection past it is closed as
    ///     soon as it is accepted. Health checkers hold one each.
    ///   - logger: Receives where the server listens and why it stopped.
    ///   - whenListening: Called once the address is bound.
    package init(
        monitor: ConnectivityMonitor,
        host: String,
        port: Int,
        bearerToken: Secret? = nil,
        maxConnections: Int = 256,
        logger: Logger,
        whenListening: @escaping @Sendable () -> Void = {}
    ) {
        let address: GRPCNIOTransportHTTP2.SocketAddress =
            host.contains(":") ? .ipv6(host: host, port: port) : .ipv4(host: host, port: port)
        let connections = ConnectionBudget(limit: maxConnections)
        // What one client may cost: a bounded number of connections, streams and request bytes
        // (a health request is a service name), and no connection kept idle without a call.
        let config = HTTP2ServerTransport.Posix.Config.defaults { config in
            config.connection.maxIdleTime = .seconds(60)
            config.http2.maxConcurrentStreams = 100
            config.rpc.maxRequestPayloadSize = 4096
            config.channelDebuggingCallbacks.onAcceptTCPConnection = { connections.admit($0) }
        }
        health = HealthService(monitor: monitor)
        server = GRPCServer(
            transport: .http2NIOPosix(address: address, transportSecurity: .plaintext, config: config),
            services: [health],
            interceptors: bearerToken.map { [BearerTokenInterceptor(token: $0)] } ?? []
        )
        self.logger = logger
        self.whenListening = whenListening
    }

    /// The TCP port the server is bound to, so a caller that asked for port 0 can learn the one
    /// the kernel chose.
    ///
    /// Waits until ``run()`` has bound the address; throws if binding failed or the server has
    /// stopped.
    package var listeningPort: Int {
        get async throws {
            let address = try await server.transport.listeningAddress
            if let ipv4 = address.ipv4 { return ipv4.port }
            if let ipv6 = address.ipv6 { return ipv6.port }
            throw RPCError(code: .internalError, message: "the server is bound to a non-IP address: \(address)")
        }
    }

    /// Serves until a graceful shutdown (or cancellation); see the type's documentation for how
    /// shutdown treats open `Watch` streams. Call at most once.
    ///
    /// - Throws: ``ReachPOSIX/SystemCallError`` when the address cannot be bound; the transport's
    ///   error when it fails.
    package func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await withGracefulShutdownHandler {
                    try await self.server.serve()
                } onGracefulShutdown: {
                    self.logger.debug("gRPC health server shutting down: ending watches, refusing new calls")
                    self.health.drain()
                    self.server.beginGracefulShutdown()
                }
            }
            group.addTask {
                // Only to log the bound address: returns (or throws, ignored) once it is known.
                if let port = try? await self.listeningPort {
                    self.logger.info("gRPC health server listening", metadata: ["port": "\(port)"])
                    self.whenListening()
                }
            }
            do {
                try await group.waitForAll()
            } catch {
                // The transport's bind failure (a RuntimeError around NIO's IOError) in the
                // system's terms, for whoever runs the server to say in its words.
                if let cause = (error as? RuntimeError)?.cause as? IOError {
                    throw SystemCallError("bind", code: cause.errnoCode)
                }
                logger.error("gRPC health server failed", metadata: ["error": "\(error)"])
                throw error
            }
        }
        logger.debug("gRPC health server stopped")
    }
}
