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
/// targets, so that no probe of an old definition can start in the new epoch and vouch for it.
final class ProbeService: Service, Sendable {
    private let prober: any Prober
    private let monitor: ConnectivityMonitor
    private let clock: MonitorClock
    private let observer: (any ProbeObserver)?
    private let certificateObserver: (any ProbeObserver)?
    private let shutdown: @Sendable () async -> Void
    private let targets: [ProbeTarget]
    /// Where the ticks fire and the probes run: one event loop, shared with the path probes.
    private let timer: EventLoopProbeTimer
    private let state = Mutex(State())

    private struct State {
        var scheduler: ProbeScheduler?
        var running: Task<Void, Never>?
        var stopped = false
    }

    /// - Parameters:
    ///   - certificateObserver: Also sees the probes while a target speaks TLS (only such probes
    ///     carry a certificate), so that a list of plain targets pays nothing for it.
    ///   - shutdown: Closes the probers' pooled resources once probing has stopped.
    init(
        targets: [ProbeTarget],
        prober: any Prober,
        monitor: ConnectivityMonitor,
        clock: MonitorClock,
        observer: (any ProbeObserver)?,
        certificateObserver: (any ProbeObserver)? = nil,
        timer: EventLoopProbeTimer = EventLoopProbeTimer(),
        shutdown: @escaping @Sendable () async -> Void
    ) {
        self.timer = timer
        self.targets = targets
        self.prober = prober
        self.monitor = monitor
        self.clock = clock
        self.observer = observer
        self.certificateObserver = certificateObserver
        self.shutdown = shutdown
    }

    /// Stops probing the old targets, runs `reconfigure` (which tells the monitor), then probes
    /// `targets` from now on. Reloads call it one at a time.
    func replaceTargets(with targets: [ProbeTarget], reconfigure: () -> Void) async {
        await stopScheduler()
        reconfigure()
        start(targets)
    }

    /// Whether the scheduler keeps time (see ``ProbeScheduler/isMakingProgress(grace:)``); true
    /// while none runs.
    func isMakingProgress(grace: Duration) -> Bool {
        state.withLock { $0.scheduler }?.isMakingProgress(grace: grace) ?? true
    }

    func run() async {
        start(targets)
        try? await gracefulShutdown()
        state.withLock { $0.stopped = true }
        await stopScheduler()
        await shutdown()
    }

    private func start(_ targets: [ProbeTarget]) {
        // Ticks on the event loop that HTTP and TCP probes run on: no hop per probe.
        var observer = self.observer
        if let certificateObserver, targets.contains(where: \.usesTLS) {
            observer = ProbeObservers(observers: (observer.map { [$0] } ?? []) + [certificateObserver])
        }
        let scheduler = ProbeScheduler(
            targets: targets,
            prober: prober,
            monitor: monitor,
            clock: clock,
            observer: observer,
            timer: timer
        )
        state.withLock { state in
            guard !state.stopped else { return }
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
