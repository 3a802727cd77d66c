import Logging
import ReachConfig
import ReachCore
import ReachLink
import ReachPOSIX
import ReachProbes
import ReachSupport
import ReachSystemd
import ServiceLifecycle

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
/// What only a daemon serves (listeners, metrics, history, hooks, sd_notify, reload) is added
/// around it by reachd, through ``init(configuration:clock:linkSource:systemBusAddress:prober:probeObservers:linkObserver:logger:)``'s
/// observers and ``replaceTargets(with:)``. A capability added here reaches both.
package struct ConnectivityEngine: Service {
    package let monitor: ConnectivityMonitor
    /// Where link facts come from (the daemon samples rtnetlink's overruns).
    package let linkSource: any LinkSource
    private let probes: ProbeService
    private let services: [any Service]
    private let logger: Logger

    /// - Parameters:
    ///   - clock: Times probes, hysteresis, callbacks and the evidence (a test clock in tests).
    ///   - linkSource: Where link facts come from; rtnetlink when `nil`.
    ///   - systemBusAddress: The D-Bus system bus to hear logind's sleep signal on; the standard
    ///     one (or `$DBUS_SYSTEM_BUS_ADDRESS`) when `nil`.
    ///   - prober: What probes the targets; the HTTP, TCP and gRPC probers when `nil`.
    ///   - probeObservers: Make what else sees every probe of the targets (the daemon's metrics and
    ///     history), given the monitor they may follow too; called once, here.
    ///   - linkObserver: Also sees every link snapshot (the daemon's link metrics).
    package init(
        configuration: Configuration,
        clock: MonitorClock = .system(),
        linkSource: (any LinkSource)? = nil,
        systemBusAddress: String? = nil,
        prober: (any Prober)? = nil,
        probeObservers: (ConnectivityMonitor) -> [any ProbeObserver] = { _ in [] },
        linkObserver: @escaping @Sendable (LinkSnapshot) -> Void = { _ in },
        logger: Logger
    ) {
        self.logger = logger
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
        probes = ProbeService(
            targets: configuration.probedTargets,
            prober: prober,
            monitor: monitor,
            clock: clock,
            observer: ProbeObservers(observers: probeObservers(monitor) + [pathEvidence]),
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
            LinkService(source: linkSource, monitor: monitor, observer: linkObserver, logger: logger),
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

    /// Stops probing the old targets, applies `configuration` to the monitor, then probes its
    /// targets (a reload that changed them). Called one at a time.
    package func replaceTargets(with configuration: Configuration) async {
        Self.sayHostProblems(configuration.targets, logger: logger)
        let monitor = monitor
        await probes.replaceTargets(with: configuration.probedTargets) { monitor.reconfigure(configuration.monitor) }
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
