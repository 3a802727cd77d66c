import Logging
import ReachAPI
import ReachConfig
import ReachCore
import ReachHooks
import ReachMetrics
import ReachSystemd
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Reloads the configuration on SIGHUP (`systemctl reload reachd`, `reachctl reload`).
///
/// A valid configuration is applied while reachd runs: subscribers keep their streams, targets
/// that did not change keep their state, added and changed ones are probed at once, removed ones
/// are forgotten. What only a restart can change (listening sockets, the token, logging) is named
/// in the log and otherwise ignored. An invalid configuration is rejected with the same messages
/// as `--check-config`, and the running one stays in force. systemd hears `RELOADING=1` (with
/// `MONOTONIC_USEC=`, as `Type=notify-reload` expects) and `READY=1` when the reload is done.
final class ReloadService: Service, Sendable {
    /// Loads the configuration as at start: the same file, the same command-line overrides.
    let load: @Sendable () throws(ConfigurationError) -> Configuration
    private let running: Mutex<Configuration>
    let monitor: ConnectivityMonitor
    let probes: ProbeService
    let metrics: ReachMetrics
    let reactions: Reactions
    let history: HistoryService
    let notifier: SystemdNotifier
    let logger: Logger

    init(
        configuration: Configuration, load: @escaping @Sendable () throws(ConfigurationError) -> Configuration,
        monitor: ConnectivityMonitor, probes: ProbeService, metrics: ReachMetrics, reactions: Reactions, history: HistoryService,
        notifier: SystemdNotifier,
        logger: Logger
    ) {
        self.running = Mutex(configuration)
        self.load = load
        self.monitor = monitor
        self.probes = probes
        self.metrics = metrics
        self.reactions = reactions
        self.history = history
        self.notifier = notifier
        self.logger = logger
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            for await _ in await UnixSignalsSequence(trapping: .sighup) {
                await self.reload()
            }
        }
    }

    /// Loads, checks and applies the configuration once; returns the change, or nil when rejected.
    @discardableResult
    func reload() async -> ConfigurationChange? {
        notifier.notify(["RELOADING=1", "MONOTONIC_USEC=\(SystemdNotifier.monotonicMicroseconds())", "STATUS=reloading the configuration"])
        defer { notifier.notify(["READY=1", "STATUS=\(monitor.current.verdict.summary)"]) }
        let configuration: Configuration
        do {
            configuration = try load()
        } catch {
            logger.error(
                "configuration reload rejected; the running configuration stays in force:\n\(error.description)",
                metadata: ReachLogEvent.reloadRejected.metadata.merging(["problems": "\(error.problems.count)"]) { _, new in new })
            return nil
        }
        let change = running.withLock { running in
            defer { running = configuration }
            return ConfigurationChange(from: running, to: configuration)
        }
        reactions.reconfigure(hooks: configuration.hooks, webhooks: configuration.webhooks)
        history.reconfigure(configuration.history)
        if change.targetsChanged {
            await probes.replaceTargets(with: configuration.probedTargets) { monitor.reconfigure(configuration.monitor) }
        } else if change.appliesLive {
            monitor.reconfigure(configuration.monitor)
        }
        if change.appliesLive { metrics.reconfigure(targets: configuration.targets, interfaces: configuration.interfaces) }
        var metadata = ReachLogEvent.configReloaded.metadata
        metadata["targets"] = "\(configuration.targets.count)"
        if !change.needsRestart.isEmpty { metadata["restart_needed"] = "\(change.needsRestart.joined(separator: ","))" }
        logger.notice("configuration reloaded: \(change.summary)", metadata: metadata)
        if !change.needsRestart.isEmpty {
            logger.warning(
                "these settings changed but take effect only when reachd restarts: \(change.needsRestart.joined(separator: ", "))",
                metadata: ["restart_needed": "\(change.needsRestart.joined(separator: ","))"])
        }
        return change
    }
}
