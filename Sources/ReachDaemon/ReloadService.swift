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
/// A valid configuration is applied while reachd runs: subscribers keep their streams, targets
/// that did not change keep their state, added and changed ones are probed at once, removed ones
/// are forgotten. The web configuration file is read again: new connections get its certificate
/// and users (``ReachServer/ListenerSecurity``). What only a restart can change (listening sockets, the token, logging) is named
/// in the log and otherwise ignored. An invalid configuration is rejected with the same messages
/// as `--check-config`, and the running one stays in force. systemd hears of it from
/// ``ServiceManagerService``, the one owner of sd_notify (``ServiceManagerService/reloading(_:)``).
///
/// The daemon traps SIGHUP before the service group starts and hands each one over
/// (``hangUp()``); this service runs once the listeners are bound (``ListenGate``), so a SIGHUP
/// during start-up is applied then: neither lost nor applied to an engine that is not running yet.
final class ReloadService: Service, Sendable {
    /// Loads the configuration as at start: the same file, the same command-line overrides.
    let load: @Sendable () throws(ConfigurationError) -> Configuration
    private let running: Mutex<Configuration>
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
        configuration: Configuration,
        load: @escaping @Sendable () throws(ConfigurationError) -> Configuration,
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
        let configuration: Configuration
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
        let change = running.withLock { running in
            defer { running = configuration }
            return ConfigurationChange(from: running, to: configuration)
        }
        reactions.reconfigure(hooks: configuration.hooks, webhooks: configuration.webhooks)
        history.reconfigure(configuration.history)
        if change.targetsChanged {
            await engine.replaceTargets(with: configuration)
        } else if change.appliesLive {
            engine.monitor.reconfigure(configuration.monitor)
        }
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
