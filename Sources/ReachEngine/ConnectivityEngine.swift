import Logging
import ReachConfig
import ReachCore
import ReachLink
import ReachPOSIX
import ReachProbes
import ReachSupport
import ReachSystemd
import ServiceLifecycle
import Synchronization

/// The verdict machinery, assembled once from a configuration: what reachd runs and what a
/// program embedding the monitor (`EmbeddedService`) runs, so that neither is ever told what the
/// other would not say.
///
/// From the configuration it builds and runs, as one service:
/// - the monitor and the link source (rtnetlink);
/// - the probe scheduler over every probed target: the targets, the portal's check URL, and the
///   variants out of each uplink and over each address family (their own scheduler, on the same loop);
/// - the captive-portal API watcher (RFC 8908);
/// - the path evidence: gateway echo, neighbour table and upstream reference;
/// - the certificate-expiry warnings;
/// - the logind sleep watcher (without logind it carries on, and says so once).
///
/// It owns its life: ``apply(_:)`` takes a new configuration while it runs, applies what can be
/// applied live and names what needs a restart, and ``checkWaitLimit`` follows the targets in force.
/// What only a daemon serves (listeners, metrics, history, hooks, sd_notify) is added around it:
/// the monitor exists from the start, so what follows it is made after the engine and added with
/// ``observe(probes:links:)``. A capability added here reaches both reachd and embedding programs.
package final class ConnectivityEngine: Service, Sendable {
    package let monitor: ConnectivityMonitor
    private let linkSource: any LinkSource
    private let probes: ProbeService
    private let observers = EngineObservers()
    private let services: [any Service]
    /// The configuration in force, and the last ``apply(_:)`` (they run one at a time).
    private let applied: Mutex<(configuration: Configuration, last: Task<ConfigurationChange, Never>?)>
    private let logger: Logger

    /// - Parameters:
    ///   - clock: Times probes, hysteresis, callbacks and the evidence (a test clock in tests).
    ///   - linkSource: Where link facts come from; rtnetlink when `nil`.
    ///   - systemBusAddress: The D-Bus system bus to hear logind's sleep signal on; the standard
    ///     one (or `$DBUS_SYSTEM_BUS_ADDRESS`) when `nil`.
    ///   - prober: What probes the targets; the HTTP, TCP and gRPC probers when `nil`.
    package init(
        configuration: Configuration,
        clock: MonitorClock = .system(),
        linkSource: (any LinkSource)? = nil,
        systemBusAddress: String? = nil,
        prober: (any Prober)? = nil,
        logger: Logger
    ) {
        self.logger = logger
        applied = Mutex((configuration, nil))
        var monitorConfiguration = configuration.monitor
        // This run's event ids start at the wall clock in microseconds (below 2^53 until 2255, so
        // JavaScript clients read them exactly): a client resuming with an id from an earlier run
        // gets a reset instead of silence.
        monitorConfiguration.firstSequence = UInt64(max(1, clock.wallTime.sinceEpoch / .microseconds(1)))
        let monitor = ConnectivityMonitor(configuration: monitorConfiguration, clock: clock, logger: logger)
        self.monitor = monitor
        let linkSource = linkSource ?? NetlinkLinkSource(logger: logger)
        self.linkSource = linkSource

        // The evidence's rounds and the captive-portal API's checks keep the pace and deadline of the quickest target.
        let shortest = configuration.probedTargets.min { $0.interval < $1.interval }
        let (interval, timeout) = (shortest?.interval ?? .seconds(1), shortest?.timeout ?? .seconds(2))
        let pathEvidence = PathEvidenceService(
            upstream: configuration.upstream,
            monitor: monitor,
            clock: clock,
            interval: interval,
            timeout: timeout,
            logger: logger
        )
        let http = HTTPProber(logger: logger)
        let icmp = ICMPBurstProber()
        let prober = prober ?? ProbeDispatcher(http: http, grpc: GRPCHealthProber(logger: logger), icmp: icmp)
        Self.sayHostProblems(configuration.targets, logger: logger)
        // One loop for the targets' probes and their variants': an uplink's probe costs what a target's does.
        let timer = EventLoopProbeTimer()
        let observers = observers
        probes = ProbeService(
            targets: configuration.probedTargets,
            prober: prober,
            monitor: monitor,
            clock: clock,
            observers: { observers.probes + [pathEvidence] },
            certificateObserver: CertificateExpiryWarner(
                window: configuration.certificateWarning,
                clock: clock,
                logger: logger
            ),
            timer: timer,
            shutdown: {
                icmp.shutdown()
                await http.shutdown()
            }
        )
        services = [
            MonitorService(monitor: monitor),
            LinkService(source: linkSource, monitor: monitor, observers: observers, logger: logger),
            SleepService(watcher: LogindSleepWatcher(logger: logger, busAddress: systemBusAddress), monitor: monitor),
            probes,
            ProbeVariantService(prober: prober, monitor: monitor, clock: clock, timer: timer, logger: logger),
            CaptivePortalService(
                settings: configuration.captivePortal,
                monitor: monitor,
                clock: clock,
                interval: interval,
                timeout: timeout,
                logger: logger
            ),
            pathEvidence,
        ]
    }

    /// Adds what else sees every probe of the targets, and every link snapshot: a daemon's metrics
    /// and history, made after the engine because they follow its ``monitor``. Call it before ``run()``.
    package func observe(probes: [any ProbeObserver], links: (@Sendable (LinkSnapshot) -> Void)? = nil) {
        observers.add(probes: probes, links: links)
    }

    /// How many times the link source lost news of a change and read everything again (rtnetlink's
    /// overruns), for a metric.
    package var linkOverrunCount: Int { linkSource.overrunCount }

    /// How long an immediate check waits for the targets in force (``ReachCore/ImmediateCheck/waitLimit(for:)``):
    /// what `POST /v1/check` and `checkNow()` wait at most, and READY=1 at the latest.
    package var checkWaitLimit: Duration {
        ImmediateCheck.waitLimit(for: applied.withLock { $0.configuration.targets })
    }

    /// Applies `configuration` while the engine runs (a reload, a program's reconfiguration), one
    /// call at a time. What changed in the targets, the policy, the interfaces, the settle window,
    /// the variants and the portal's check URL takes effect now: subscribers keep their streams,
    /// unchanged targets keep their state, added and changed ones are probed at once (the old
    /// targets' scheduler stopped first, so that no probe of an old definition vouches for the new
    /// epoch). The rest is named in the answer's ``ConfigurationChange/needsRestart``, as is the
    /// check-wait limit now in force.
    package func apply(_ configuration: Configuration) async -> ConfigurationChange {
        let turn = applied.withLock { applied in
            let previous = applied.last
            let turn = Task {
                _ = await previous?.value
                return await self.applyNow(configuration)
            }
            applied.last = turn
            return turn
        }
        return await turn.value
    }

    private func applyNow(_ configuration: Configuration) async -> ConfigurationChange {
        let change = applied.withLock { applied in
            defer { applied.configuration = configuration }
            return ConfigurationChange(from: applied.configuration, to: configuration)
        }
        let monitor = monitor
        if change.targetsChanged {
            Self.sayHostProblems(configuration.targets, logger: logger)
            await probes.replaceTargets(with: configuration.probedTargets) {
                monitor.reconfigure(configuration.monitor)
            }
        } else if change.appliesLive {
            monitor.reconfigure(configuration.monitor)
        }
        return change
    }

    /// Whether the probe scheduler keeps time (``ProbeScheduler/isMakingProgress(grace:)``): what
    /// systemd's watchdog is fed on.
    package func isMakingProgress(grace: Duration) -> Bool {
        probes.isMakingProgress(grace: grace)
    }

    /// Runs every part until a graceful shutdown (or until the calling task is cancelled); they
    /// stop in reverse order, so the monitor, first, ends last and closes every subscription.
    package func run() async throws {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: services.map { .init(service: $0) }, logger: logger)
        )
        try await withGracefulShutdownHandler {
            try await group.run()
        } onGracefulShutdown: {
            Task { await group.triggerGracefulShutdown() }
        }
    }
}
