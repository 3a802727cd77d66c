import Logging
import ReachAPI
import ReachConfig
import ReachCore
import ReachEngine
import ReachHooks
import ReachMetrics
import ReachServer
import ReachSupport
import ReachSystemd
import ServiceLifecycle
import Synchronization

/// Reloads the configuration on SIGHUP (`systemctl reload reachd`, `reachctl reload`).
///
/// A valid configuration is applied while reachd runs: the engine's part by the engine
/// (``ReachEngine/ConnectivityEngine/apply(_:)``: subscribers keep their streams, targets that did
/// not change keep their state, added and changed ones are probed at once, removed ones are
/// forgotten), then the daemon's: hooks, webhooks, history, metrics, and the web configuration
/// file, read again (new connections get its certificate and users: ``ReachServer/ListenerSecurity``).
/// What only a restart can change (listening sockets, the token, logging, and what the engine names)
/// is named in the log and otherwise ignored. An invalid configuration is rejected with the same messages
/// as `--check-config`, and the running one stays in force. systemd hears of it from
/// ``ServiceManagerService``, the one owner of sd_notify (``ServiceManagerService/reloading(_:)``).
///
/// The daemon traps SIGHUP before the service group starts and hands each one over
/// (``hangUp()``); this service runs once the listeners are bound (``ListenGate``), so a SIGHUP
/// during start-up is applied then: neither lost nor applied to an engine that is not running yet.
final class ReloadService: Service, Sendable {
    /// Loads the configuration as at start: the same file, the same command-line overrides.
    let load: @Sendable () throws(ConfigurationError) -> DaemonConfiguration
    private let running: Mutex<DaemonConfiguration>
    let engine: ConnectivityEngine
    let metrics: ReachMetrics
    let reactions: Reactions
    let history: HistoryService
    /// The status listener's TLS and users, when a web configuration file gives them.
    let security: ListenerSecurity?
    let serviceManager: ServiceManagerService
    /// SIGHUPs not yet applied: several before the service runs make one reload.
    private let hangups = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let logger: Logger

    init(
        configuration: DaemonConfiguration,
        load: @escaping @Sendable () throws(ConfigurationError) -> DaemonConfiguration,
        engine: ConnectivityEngine,
        metrics: ReachMetrics,
        reactions: Reactions,
        history: HistoryService,
        security: ListenerSecurity?,
        serviceManager: ServiceManagerService,
        logger: Logger
    ) {
        self.running = Mutex(configuration)
        self.load = load
        self.engine = engine
        self.metrics = metrics
        self.reactions = reactions
        self.history = history
        self.security = security
        self.serviceManager = serviceManager
        self.logger = logger
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            for await _ in self.hangups.stream {
                await self.reload()
            }
        }
    }

    /// A SIGHUP came: reload once this service runs (at once when it does).
    func hangUp() {
        hangups.continuation.yield()
    }

    /// Loads, checks and applies the configuration once; returns the change, or nil when rejected.
    @discardableResult
    func reload() async -> ConfigurationChange? {
        await serviceManager.reloading { await apply() }
    }

    private func apply() async -> ConfigurationChange? {
        let configuration: DaemonConfiguration
        do {
            configuration = try load()
            try security?.update(configuration.web)
        } catch {
            logger.error(
                "configuration reload rejected; the running configuration stays in force:\n\(error.description)",
                metadata: ReachLogEvent.reloadRejected.metadata.merging(["problems": "\(error.problems.count)"]) {
                    _,
                    new in new
                }
            )
            return nil
        }
        let needsRestart = running.withLock { running in
            defer { running = configuration }
            return configuration.settingsNeedingRestart(since: running)
        }
        reactions.reconfigure(hooks: configuration.hooks, webhooks: configuration.webhooks)
        history.reconfigure(configuration.history)
        var change = await engine.apply(configuration.engine)
        change.needsRestart = needsRestart + change.needsRestart
        if change.appliesLive {
            metrics.reconfigure(targets: configuration.targets, interfaces: configuration.interfaces)
        }
        var metadata = ReachLogEvent.configReloaded.metadata
        metadata["targets"] = "\(configuration.targets.count)"
        if !change.needsRestart.isEmpty { metadata["restart_needed"] = "\(change.needsRestart.joined(separator: ","))" }
        logger.notice("configuration reloaded: \(change.summary)", metadata: metadata)
        if !change.needsRestart.isEmpty {
            logger.warning(
                "these settings changed but take effect only when reachd restarts: \(change.needsRestart.joined(separator: ", "))",
                metadata: ["restart_needed": "\(change.needsRestart.joined(separator: ","))"]
            )
        }
        return change
    }
}

extension DaemonConfiguration {
    /// The keys of what only the daemon serves that differ from `old` and take effect only when
    /// reachd restarts: the listening sockets, the token, TLS on or off, the idle timeout, logging.
    func settingsNeedingRestart(since old: DaemonConfiguration) -> [String] {
        var keys: [String] = []
        if old.listen != listen { keys.append("listen") }
        if old.socket != socket { keys.append("socket") }
        if old.apiToken != apiToken { keys.append("api.bearer_token_file") }
        if (old.web?.tls == nil) != (web?.tls == nil) { keys.append("api.web_config_file: tls_server_config") }
        if old.apiIdleTimeout != apiIdleTimeout { keys.append("api.idle_timeout") }
        if old.grpcHealthListen != grpcHealthListen { keys.append("grpc_health.listen") }
        if old.log != log { keys.append("log") }
        return keys
    }
}
