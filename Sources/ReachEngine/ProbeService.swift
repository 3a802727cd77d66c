import Logging
import ReachCore
import ReachProbes
import ReachSupport
import ServiceLifecycle
import Synchronization

/// Runs the probe scheduler as a service, replaces it when a reload changes the targets, and
/// closes the probers' connections when it stops.
///
/// A new target list gets a new ``ProbeScheduler``: its grid, its watch streams and its first
/// round of immediate probes are those of the new list. The old scheduler is stopped first (its
/// probes in flight cancelled, which is no evidence), and only then is the monitor told of the new
/// targets, so that no probe of an old definition can start in the new epoch and vouch for it. A
/// replacement before the service runs only changes what it will probe when it does.
final class ProbeService: Service, Sendable {
    private let prober: any Prober
    private let monitor: ConnectivityMonitor
    private let clock: MonitorClock
    /// What sees every probe, taken when a scheduler starts.
    private let observers: @Sendable () -> [any ProbeObserver]
    private let certificateObserver: (any ProbeObserver)?
    private let shutdown: @Sendable () async -> Void
    /// Where the ticks fire and the probes run: one event loop, shared with the path probes.
    private let timer: EventLoopProbeTimer
    private let state: Mutex<State>

    private struct State {
        /// What to probe: the targets at start, then each replacement's.
        var targets: [ProbeTarget]
        var scheduler: ProbeScheduler?
        var running: Task<Void, Never>?
        /// ``run()`` has started probing; a scheduler starts only from then on.
        var started = false
        /// A replacement is under way: no scheduler starts until it is done.
        var replacing = false
        var stopped = false
    }

    /// - Parameters:
    ///   - observers: What sees every probe; asked each time a scheduler starts.
    ///   - certificateObserver: Also sees the probes while a target speaks TLS (only such probes
    ///     carry a certificate), so that a list of plain targets pays nothing for it.
    ///   - shutdown: Closes the probers' pooled resources once probing has stopped.
    init(
        targets: [ProbeTarget],
        prober: any Prober,
        monitor: ConnectivityMonitor,
        clock: MonitorClock,
        observers: @escaping @Sendable () -> [any ProbeObserver],
        certificateObserver: (any ProbeObserver)? = nil,
        timer: EventLoopProbeTimer = EventLoopProbeTimer(),
        shutdown: @escaping @Sendable () async -> Void
    ) {
        self.timer = timer
        self.state = Mutex(State(targets: targets))
        self.prober = prober
        self.monitor = monitor
        self.clock = clock
        self.observers = observers
        self.certificateObserver = certificateObserver
        self.shutdown = shutdown
    }

    /// Stops probing the old targets, runs `reconfigure` (which tells the monitor), then probes
    /// `targets` from now on. Reloads call it one at a time.
    func replaceTargets(with targets: [ProbeTarget], reconfigure: () -> Void) async {
        state.withLock { $0.replacing = true }
        await stopScheduler()
        reconfigure()
        state.withLock { state in
            state.targets = targets
            state.replacing = false
        }
        start()
    }

    /// Whether the scheduler keeps time (see ``ProbeScheduler/isMakingProgress(grace:)``); true
    /// while none runs.
    func isMakingProgress(grace: Duration) -> Bool {
        state.withLock { $0.scheduler }?.isMakingProgress(grace: grace) ?? true
    }

    func run() async {
        state.withLock { $0.started = true }
        start()
        try? await gracefulShutdown()
        state.withLock { $0.stopped = true }
        await stopScheduler()
        await shutdown()
    }

    /// Starts a scheduler over the targets, once the service runs, unless one runs, a replacement
    /// is under way, or the service stopped.
    private func start() {
        var observers = self.observers()
        state.withLock { state in
            guard state.started, !state.replacing, !state.stopped, state.scheduler == nil else { return }
            if let certificateObserver, state.targets.contains(where: \.usesTLS) {
                observers.append(certificateObserver)
            }
            // Ticks on the event loop that HTTP and TCP probes run on: no hop per probe.
            let scheduler = ProbeScheduler(
                targets: state.targets,
                prober: prober,
                monitor: monitor,
                clock: clock,
                observer: observers.isEmpty ? nil : ProbeObservers(observers: observers),
                timer: timer
            )
            state.scheduler = scheduler
            state.running = Task { await scheduler.run() }
        }
    }

    private func stopScheduler() async {
        let running = state.withLock { state in
            defer { (state.scheduler, state.running) = (nil, nil) }
            return state.running
        }
        running?.cancel()
        await running?.value
    }
}
