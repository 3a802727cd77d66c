import Hummingbird
import HummingbirdCore
import Logging
import ReachAPI
import ReachCore
import ReachMetrics
import ReachStatusPage
import ReachSupport

#if canImport(Glibc)
import Glibc
#endif

/// reachd's status API over HTTP, for programs and people: the verdict as JSON, a Server-Sent
/// Events stream of every change, an on-demand check, reachd's own liveness, and Prometheus metrics.
///
/// ```swift
/// let server = StatusServer(monitor: monitor, metrics: metrics, address: .tcp(host: "127.0.0.1", port: 9780), logger: logger)
/// let serviceGroup = ServiceGroup(services: [..., server.makeApplication()], logger: logger)
/// ```
///
/// | Route | Answer |
/// |---|---|
/// | `GET /v1/status` | ``StatusDocument`` |
/// | `GET /v1/events` | `text/event-stream` of ``StatusDocument``s; resumes after `Last-Event-ID` |
/// | `POST /v1/check` | probes every target now, then the ``StatusDocument`` |
/// | `GET /v1/history` | a ``HistoryDocument`` from ``HistoryReading`` |
/// | `GET /healthz` | `{"status":"ok"}` while reachd itself works, whatever the connectivity |
/// | `GET /metrics` | Prometheus text from ``ReachMetrics`` |
/// | `GET /` | the status page (``ReachStatusPage/StatusPage``), HTML for a person; `?token=` once sets its cookie |
///
/// Errors are `{"error": "..."}`: 400, 401, 404, 405 (with `Allow`), 503. `Sources/ReachAPI/openapi.yaml`
/// describes all of it.
///
/// **Access.** With a bearer token set, every route but `/healthz` requires
/// `Authorization: Bearer <token>`. The daemon requires a token for any listen address that is not
/// loopback (see ``Address/needsToken``): the status reveals which servers this machine talks to and
/// when it is offline, and `POST /v1/check` makes it send probes. On loopback or a Unix socket the
/// operating system's access control is the boundary.
package struct StatusServer: Sendable {
    /// Where the server listens.
    package enum Address: Sendable, Hashable, CustomStringConvertible {
        /// A host (an IP address or `localhost`) and port; port 0 picks a free one.
        case tcp(host: String, port: Int)
        /// A Unix domain socket; a stale socket file from an earlier run is replaced.
        case unixSocket(String)

        /// Whether a server here must ask for a bearer token: on TCP as
        /// ``ReachSupport/HostPort/listenerNeedsToken`` says; never on a Unix socket, whose file mode
        /// is the boundary.
        package var needsToken: Bool {
            switch self {
            case .tcp(let host, let port): HostPort(host: host, port: port).listenerNeedsToken
            case .unixSocket: false
            }
        }

        package var description: String {
            switch self {
            case .tcp(let host, let port): HostPort(host: host, port: port).description
            case .unixSocket(let path): "unix:\(path)"
            }
        }

        var bindAddress: BindAddress {
            switch self {
            case .tcp(let host, let port): .hostname(host, port: port)
            case .unixSocket(let path): .unixDomainSocket(path: path)
            }
        }
    }

    /// The paths the API answers and the methods each accepts (``ReachAPI/StatusAPI/routes``):
    /// routing, 405 answers and authentication all read this one table.
    static let routes: [String: [HTTPRequest.Method]] = Dictionary(
        StatusAPI.routes.map { ($0.path, [HTTPRequest.Method(rawValue: $0.method)!]) },
        uniquingKeysWith: +
    )

    /// The paths that answer without the bearer token.
    static let openPaths = Set(StatusAPI.routes.filter(\.isOpen).map(\.path))

    private let monitor: ConnectivityMonitor
    private let metrics: ReachMetrics
    private let address: Address
    private let bearerToken: Secret?
    private let security: ListenerSecurity?
    private let heartbeatInterval: Duration
    private let checkWaitLimit: @Sendable () -> Duration
    private let limits: Limits
    private let history: (any HistoryReading)?
    private let logger: Logger

    /// - Parameters:
    ///   - bearerToken: Required of every client but `/healthz` when set; mandatory when `address`
    ///     is not local and `security` authenticates no client (the daemon checks).
    ///   - security: TLS and basic auth from the web configuration file; plain HTTP when `nil`.
    ///   - heartbeatInterval: How often an idle event stream carries a `: heartbeat` comment.
    ///   - checkWaitLimit: The longest `POST /v1/check` waits for fresh results before answering
    ///     with what it has, asked at each check: the engine's for the targets in force
    ///     (``ReachCore/ImmediateCheck/waitLimit(for:)``), which a reload changes.
    ///   - limits: What one client may cost: header and body sizes, idle time, connections.
    ///   - history: What `GET /v1/history` reads, and the status page's uptime and transitions; `nil`
    ///     answers it with `503` (history is off) and the page says there is no history.
    package init(
        monitor: ConnectivityMonitor,
        metrics: ReachMetrics,
        address: Address,
        bearerToken: Secret? = nil,
        security: ListenerSecurity? = nil,
        heartbeatInterval: Duration = .seconds(15),
        checkWaitLimit: @escaping @Sendable () -> Duration = { .seconds(3) },
        limits: Limits = Limits(),
        history: (any HistoryReading)? = nil,
        logger: Logger
    ) {
        precondition(heartbeatInterval > .zero, "the heartbeat interval must be positive")
        self.monitor = monitor
        self.metrics = metrics
        self.address = address
        self.bearerToken = bearerToken
        self.security = security
        self.heartbeatInterval = heartbeatInterval
        self.checkWaitLimit = checkWaitLimit
        self.limits = limits
        self.history = history
        self.logger = logger
    }

    /// The HTTP application: a `Service` to run in the daemon's `ServiceGroup`. Graceful shutdown
    /// stops accepting connections and ends every event stream.
    ///
    /// A Unix socket is created by the bind with the mode the umask leaves (0755 under the usual
    /// 022, so only its owner can connect: connecting needs write permission); once the server runs
    /// it is set to ``unixSocketMode`` (0660), so members of the daemon's group can connect too.
    ///
    /// Running it throws ``ReachPOSIX/SystemCallError`` when the address cannot be bound.
    ///
    /// - Parameter whenListening: Called once the address is bound (and a socket's mode set).
    package func makeApplication(whenListening: @escaping @Sendable () -> Void = {}) -> some ApplicationProtocol {
        let address = self.address
        let logger = self.logger
        let http1 = limits.http1
        let server: HTTPServerBuilder =
            if let security, security.servesTLS {
                HTTPServerBuilder { responder in
                    SecuredChannel(base: HTTP1Channel(responder: responder, configuration: http1), security: security)
                }
            } else {
                .http1(configuration: http1)
            }
        return QuietApplication(
            responder: makeRouter().buildResponder(),
            server: server,
            configuration: ApplicationConfiguration(
                address: address.bindAddress,
                availableConnectionsDelegate: MaximumAvailableConnections(limits.maxConnections)
            ),
            logger: logger,
            whenRunning: { _ in
                defer { whenListening() }
                guard case .unixSocket(let path) = address else { return }
                if chmod(path, Self.unixSocketMode) != 0 {
                    logger.warning(
                        "could not set the status socket's mode",
                        metadata: ["path": "\(path)", "errno": "\(errno)"]
                    )
                }
            }
        )
    }

    /// The mode of a Unix socket once the server runs: owner and group may connect.
    package static let unixSocketMode: mode_t = 0o660

    /// The router ``makeApplication(whenListening:)`` serves: middleware, then the routes.
    /// Package-visible for the fuzz targets (`FuzzTesting`), which send it forged requests.
    package func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        // Middleware applies to routes added after it, and to unmatched requests.
        router.add(middleware: APIErrorMiddleware(allowedMethods: Self.routes))
        router.add(middleware: BodyLimitMiddleware(maxBodyBytes: limits.maxBodyBytes))
        let bearer = bearerToken.map { BearerAuthMiddleware<BasicRequestContext>(token: $0, openPaths: Self.openPaths) }
        if let security {
            router.add(middleware: BasicAuthMiddleware(security: security, bearer: bearer, openPaths: Self.openPaths))
        } else if let bearer {
            router.add(middleware: bearer)
        } else if case .tcp = address {
            router.add(middleware: LoopbackHostMiddleware(openPaths: Self.openPaths))
        }
        let handlers = StatusRoutes(
            monitor: monitor,
            metrics: metrics,
            events: EventStream(
                monitor: monitor,
                heartbeatInterval: heartbeatInterval,
                trimmer: HeapTrimmer(trimmed: metrics.countHeapTrim)
            ),
            checkWaitLimit: checkWaitLimit,
            history: history
        )
        router.get(RouterPath(StatusAPI.status.path)) { _, _ in handlers.status() }
        router.get(RouterPath(StatusAPI.events.path)) { request, _ in try handlers.events(request) }
        router.post(RouterPath(StatusAPI.check.path)) { _, _ in await handlers.check() }
        router.get(RouterPath(StatusAPI.history.path)) { request, _ in try await handlers.history(request) }
        router.get(RouterPath(StatusAPI.liveness.path)) { _, _ in await handlers.health() }
        router.get(RouterPath(StatusAPI.metrics.path)) { _, _ in handlers.prometheus() }
        let page = StatusPageRoutes(monitor: monitor, history: history)
        router.get(RouterPath(StatusAPI.page.path)) { _, _ in await page.page() }
        router.get(RouterPath(StatusAPI.pageStyle.path)) { _, _ in StatusPageRoutes.style() }
        router.get(RouterPath(StatusAPI.pageScript.path)) { _, _ in StatusPageRoutes.script() }
        return router
    }
}
