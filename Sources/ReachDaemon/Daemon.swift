import Logging
import ReachConfig
import ReachCore
import ReachEngine
import ReachGRPCServer
import ReachHooks
import ReachMetrics
import ReachPOSIX
import ReachServer
import ReachSupport
import ReachSystemd
import ServiceLifecycle
import UnixSignals

/// The composition root: the engine (``ReachEngine/ConnectivityEngine``, the verdict machinery
/// a program embedding the monitor runs too) plus what only a daemon serves: the status API's and
/// gRPC health listeners, metrics, history, hooks and webhooks, sd_notify and reload. Runs them
/// as one service group until SIGTERM or SIGINT.
///
/// Each part is one service in ``services``; adding one is one line there. The engine's adapters
/// default to the real ones; tests pass stand-ins for those around the unit they test.
package struct Daemon: Sendable {
    package let configuration: DaemonConfiguration
    package var monitor: ConnectivityMonitor { engine.monitor }
    /// How long `POST /v1/check` waits now: the engine's, for the targets in force.
    package var checkWaitLimit: Duration { engine.checkWaitLimit }
    private let engine: ConnectivityEngine
    private let source: DaemonConfiguration.Source
    private let reloads: ReloadService
    private let serviceManager: ServiceManagerService
    private let metrics: ReachMetrics
    private let statusServer: StatusServer
    /// TLS and basic auth on `listen`, or why the web configuration cannot give them.
    private let security: Result<ListenerSecurity?, ConfigurationError>
    private let socketServer: (path: String, server: StatusServer)?
    private let grpcHealthServer: (address: HostPort, server: GRPCHealthServer)?
    private let listening: ListenGate
    private let reactions: Reactions
    private let history: HistoryService
    private let logger: Logger

    /// - Parameters:
    ///   - linkSource: Where link facts come from; rtnetlink when `nil`.
    ///   - systemBusAddress: The D-Bus system bus to hear logind's sleep signal on; the standard
    ///     one (or `$DBUS_SYSTEM_BUS_ADDRESS`) when `nil`.
    ///   - prober: What probes the targets; the HTTP, TCP and gRPC probers when `nil`.
    ///   - notifier: The service manager to keep informed (`sd_notify`); none by default.
    ///   - reload: Loads the configuration again on SIGHUP, as it was loaded at start; without it
    ///     a reload re-applies the configuration reachd started with.
    package init(
        configuration: DaemonConfiguration,
        source: DaemonConfiguration.Source,
        clock: MonitorClock = .system(),
        linkSource: (any LinkSource)? = nil,
        systemBusAddress: String? = nil,
        prober: (any Prober)? = nil,
        notifier: SystemdNotifier = SystemdNotifier(socket: nil, watchdogInterval: nil),
        reload: (@Sendable () throws(ConfigurationError) -> DaemonConfiguration)? = nil,
        logger: Logger
    ) {
        self.configuration = configuration
        self.source = source
        self.logger = logger
        let metrics = ReachMetrics(targets: configuration.targets, interfaces: configuration.interfaces)
        self.metrics = metrics
        let engine = ConnectivityEngine(
            configuration: configuration.engine,
            clock: clock,
            linkSource: linkSource,
            systemBusAddress: systemBusAddress,
            prober: prober,
            logger: logger
        )
        self.engine = engine
        let monitor = engine.monitor
        // The history follows the engine's monitor, and records its probes with the metrics.
        let history = HistoryService(
            settings: configuration.history,
            monitor: monitor,
            metrics: metrics,
            clock: clock,
            logger: logger
        )
        self.history = history
        engine.observe(probes: [metrics, history]) { metrics.update(links: $0) }
        metrics.sampleNetlinkOverruns { engine.linkOverrunCount }
        let reactions = Reactions(
            monitor: monitor,
            hooks: configuration.hooks,
            webhooks: configuration.webhooks,
            observer: metrics,
            logger: logger
        )
        self.reactions = reactions
        let serviceManager = ServiceManagerService(
            notifier: notifier,
            monitor: monitor,
            engine: engine,
            // The first probes' timeouts: READY=1 goes out then at the latest.
            readyTimeout: engine.checkWaitLimit,
            clock: clock,
            logger: logger
        )
        self.serviceManager = serviceManager
        let security = Result<ListenerSecurity?, ConfigurationError> { () throws(ConfigurationError) in
            try configuration.web.map { web throws(ConfigurationError) in try ListenerSecurity(web) }
        }
        self.security = security
        self.reloads = ReloadService(
            configuration: configuration,
            load: reload ?? { configuration },
            engine: engine,
            metrics: metrics,
            reactions: reactions,
            history: history,
            security: try? security.get(),
            serviceManager: serviceManager,
            logger: logger
        )
        let listening = ListenGate(
            listeners: 1 + (configuration.socket == nil ? 0 : 1) + (configuration.grpcHealthListen == nil ? 0 : 1)
        )
        self.listening = listening
        let limits = StatusServer.Limits(idleTimeout: configuration.apiIdleTimeout)
        self.statusServer = StatusServer(
            monitor: monitor,
            metrics: metrics,
            address: .tcp(host: configuration.listen.host, port: configuration.listen.port),
            bearerToken: configuration.apiToken,
            security: try? security.get(),
            checkWaitLimit: { engine.checkWaitLimit },
            limits: limits,
            history: history,
            logger: logger
        )
        self.socketServer = configuration.socket.map { path in
            let server = StatusServer(
                monitor: monitor,
                metrics: metrics,
                address: .unixSocket(path),
                bearerToken: configuration.apiToken,
                checkWaitLimit: { engine.checkWaitLimit },
                limits: limits,
                history: history,
                logger: logger
            )
            return (path, server)
        }
        self.grpcHealthServer = configuration.grpcHealthListen.map { address in
            let server = GRPCHealthServer(
                monitor: monitor,
                host: address.host,
                port: address.port,
                bearerToken: configuration.apiToken,
                logger: logger,
                whenListening: listening.listenerIsBound
            )
            return (address, server)
        }
    }

    /// The services, in start order; they stop in reverse, so the engine, first, ends last.
    ///
    /// The listeners bind first: every other service is held (``ListenGate``) until they all are.
    var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        let whenListening = listening.listenerIsBound
        let held = { (service: any Service) in
            ServiceGroupConfiguration.ServiceConfiguration(service: listening.holding(service))
        }
        return [
            held(engine),
            held(MetricsService(metrics: metrics, monitor: monitor)),
            held(history),
            held(reactions),
            .init(
                service: Listener(
                    address: .tcp(configuration.listen),
                    key: "listen",
                    service: statusServer.makeApplication(whenListening: whenListening)
                )
            ),
        ]
            + (socketServer.map { socket in
                [
                    .init(
                        service: Listener(
                            address: .unixSocket(path: socket.path),
                            key: "socket",
                            service: socket.server.makeApplication(whenListening: whenListening)
                        )
                    )
                ]
            } ?? [])
            + (grpcHealthServer.map { grpc in
                [.init(service: Listener(address: .tcp(grpc.address), key: "grpc_health.listen", service: grpc.server))]
            } ?? [])
            + [
                held(reloads),
                // Last, so that they are the first to hear of a graceful stop (STOPPING=1, the "stopping" line).
                held(serviceManager),
                held(LifecycleAnnouncement(logger: logger)),
            ]
    }

    /// Applies the configuration again, as on SIGHUP; returns what changed, or nil when it was rejected.
    @discardableResult
    package func reload() async -> ConfigurationChange? {
        await reloads.reload()
    }

    /// Checks what only the status server can: that the web configuration's certificate, key and
    /// client CAs make a TLS context (`--check-config` and start-up say the same).
    ///
    /// - Throws: ``ReachConfig/ConfigurationError`` naming the web configuration file and key.
    package static func checkListenerSecurity(_ configuration: DaemonConfiguration) throws(ConfigurationError) {
        if let web = configuration.web { _ = try ListenerSecurity(web) }
    }

    /// What this machine does not allow of the configuration's probes, a sentence each (ICMP echo
    /// outside `net.ipv4.ping_group_range`): `--check-config` prints them as warnings, and start-up
    /// logs them. The file is still valid; the host's setting is what to change.
    package static func hostWarnings(_ configuration: Configuration) -> [String] {
        ConnectivityEngine.hostProblems(for: configuration.targets)
    }

    /// Runs until SIGTERM or SIGINT (or until the calling task is cancelled), then stops within a second.
    ///
    /// - Throws: ``ReachConfig/ConfigurationError`` when the web configuration's TLS files cannot
    ///   serve, before anything starts.
    package func run() async throws {
        _ = try security.get()
        // The configuration parser enforces this too; a Configuration built in code is checked here.
        let address = StatusServer.Address.tcp(host: configuration.listen.host, port: configuration.listen.port)
        guard !address.needsToken || configuration.apiToken != nil || configuration.web?.authenticatesClients == true
        else {
            logger.critical("refusing to serve the status endpoint on \(configuration.listen) without a bearer token")
            throw UnprotectedStatusEndpoint(listen: configuration.listen)
        }
        // SIGHUP means "reload" from the start: trapped before any service runs, so that one that
        // comes during start-up is applied once reloads run rather than lost.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let forwarding = Task { [reloads] in for await _ in hangups { reloads.hangUp() } }
        defer { forwarding.cancel() }
        logStartup()
        var group = ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        group.maximumGracefulShutdownDuration = .milliseconds(750)
        // No cancellation deadline: service-lifecycle enforces it with fatalError, turning a slow
        // stop under load into a crash. systemd's TimeoutStopSec is the backstop instead.
        group.maximumCancellationDuration = nil
        try await ServiceGroup(configuration: group).run()
        logger.info("reachd stopped")
    }

    private func logStartup() {
        logger.info(
            "reachd \(ReachVersion.current) starting",
            metadata: [
                "config": "\(source)",
                "targets": "\(configuration.targets.count)",
                "policy": "\(configuration.policy)",
                ReachLogEvent.metadataKey: "\(ReachLogEvent.started.rawValue)",
            ]
        )
        for target in configuration.targets.prefix(10) {
            logger.info(
                "watching \(target.name): \(target.summary) every \(target.interval.configText), timeout \(target.timeout.configText)",
                metadata: [
                    "target": "\(target.name)", "kind": "\(target.kind)",
                ]
            )
        }
        if configuration.targets.count > 10 {
            logger.info("and \(configuration.targets.count - 10) more targets")
        }
    }
}

extension ProbeTarget {
    /// What is probed, in a few words: the URL, or the address and service.
    var summary: String {
        switch check {
        case .http(let http): http.url
        case .tcp(let endpoint): "tcp \(endpoint)"
        case .grpc(let grpc): "grpc health \(grpc.endpoint)\(grpc.service.isEmpty ? "" : " service \(grpc.service)")"
        case .dns(let dns):
            "dns \(dns.recordType.rawValue) \(dns.query) at \(dns.server.map { "\($0)" } ?? "this host's resolvers")"
                + (dns.transport == .tcp ? " over tcp" : "")
        case .icmp(let icmp): "icmp \(icmp.host), \(icmp.packets) echo\(icmp.packets == 1 ? "" : "es") a probe"
        }
    }
}

/// The status endpoint would be reachable from other machines without a bearer token.
package struct UnprotectedStatusEndpoint: Error, CustomStringConvertible {
    package let listen: HostPort

    package var description: String {
        "\(listen) is reachable from other machines: set api.bearer_token_file so that only clients with the token are answered"
    }
}
