import ReachSupport
import Synchronization

/// Probes every target at its own cadence and hands each result to the monitor.
///
/// Each target ticks on a fixed grid (`interval`, default 1 s) whose phase is spread evenly over the
/// interval, so a thousand targets do not fire in the same millisecond. Every tick starts a probe,
/// even while earlier probes of the target still run (a blackholed server holds each one to its
/// deadline): when the server comes back, the probe that sees it starts at the next tick instead
/// of after the hanging probe's deadline, as Prometheus' blackbox_exporter does with a probe per
/// scrape. At most ``maximumOverlap(interval:timeout:)`` probes of a target are in flight at once;
/// a tick that finds that many is skipped and counted (``skippedTicks``).
///
/// Results are applied in start order: a result whose probe started before the probe of the
/// latest result applied for its target is stale, so it is dropped and counted
/// (``supersededResults``). A late timeout of an old probe therefore never overrides a newer
/// success, nor an older success a newer failure.
///
/// The monitor's ``ProbeControl`` drives the rest: nothing is probed while it says suspended (no
/// usable link, system asleep), and every target is probed at once on start and whenever its
/// immediate-probe counter grows (link regained, system woke, a client asked), beside any probes
/// still in flight while there is room. Such a burst is spread over a millisecond per target, at
/// most half the interval: one target is probed at once, a thousand do not open a thousand
/// connections in the same instant.
///
/// One timer keeps the grid: each time it fires, the due probes start and it is set for the next
/// tick. With the daemon's timer on an event loop and a ``StartingProber``, a tick starts its
/// probes on that loop and each result is recorded where it arrives: no task and no thread hop per
/// probe. Other probers run each probe in a task of its own.
package final class ProbeScheduler: Sendable {
    private let targets: [ProbeTarget]
    private let prober: any Prober
    /// `prober` as a ``StartingProber``, cast once: a dynamic cast per probe showed in profiles.
    private let starting: (any StartingProber)?
    private let monitor: ConnectivityMonitor
    private let clock: MonitorClock
    private let timer: any ProbeTimer
    private let observer: (any ProbeObserver)?
    private let state: Mutex<ProbeSchedule>
    /// The last probe control acted on; see ``followedProbeControl``.
    private let followed = Mutex<ProbeControl?>(nil)
    /// Per target, which result was applied last; its own lock, so results of different targets
    /// never wait for each other and the dispatcher never waits for a result being recorded.
    private let order: [ResultOrder]

    /// - Parameter timer: Where the ticks fire; by default a task asleep on `clock`.
    package init(
        targets: [ProbeTarget],
        prober: any Prober,
        monitor: ConnectivityMonitor,
        clock: MonitorClock,
        observer: (any ProbeObserver)? = nil,
        timer: any ProbeTimer = SleepingProbeTimer()
    ) {
        self.targets = targets
        self.prober = prober
        self.starting = prober as? any StartingProber
        self.monitor = monitor
        self.clock = clock
        self.timer = timer
        self.observer = observer
        self.state = Mutex(ProbeSchedule(targets: targets))
        self.order = targets.map { _ in ResultOrder() }
    }

    /// How many probes of one target may be in flight at once: `ceil(timeout / interval) + 1`,
    /// at most 3 (and at least 2).
    ///
    /// A probe ends by its deadline, so when a tick fires, the probes started at the previous
    /// `ceil(timeout / interval)` ticks may still run (the oldest racing its deadline); one more
    /// lets every tick of a blackholed target start its probe, so the first probe after the server
    /// returns starts within one interval. At the default 1 s interval and 2 s timeout that is 3.
    /// The cap keeps a short interval with a long timeout from multiplying connections: a thousand
    /// blackholed targets hold at most 3,000 probes (each up to two sockets while both address
    /// families race), within the daemon's descriptor budget. Past the cap (a timeout over twice
    /// the interval), ticks are skipped until a probe ends, and the first probe after the server
    /// returns starts within `timeout - interval` rather than one interval.
    package static func maximumOverlap(interval: Duration, timeout: Duration) -> Int {
        guard interval > .zero else { return 3 }
        let covered = Int((timeout / interval).rounded(.up))
        return min(max(covered, 1), 2) + 1
    }

    /// How many ticks of each target were skipped because it already had
    /// ``maximumOverlap(interval:timeout:)`` probes in flight: its probes outlast their deadline
    /// (a prober that ignores it), or immediate probes filled the room the grid needed.
    package var skippedTicks: [String: UInt64] {
        state.withLock { state in
            Dictionary(uniqueKeysWithValues: zip(targets.map(\.name), state.slots.map(\.skipped)))
        }
    }

    /// How many results of each target were dropped because a probe that started later had
    /// already been applied (see ``ProbeObserver/probeSuperseded(_:result:)``).
    package var supersededResults: [String: UInt64] {
        Dictionary(uniqueKeysWithValues: zip(targets.map(\.name), order.map(\.superseded)))
    }

    /// Whether the scheduler is keeping time: its dispatcher woke when it meant to, give or take
    /// `grace`, and no probe in flight has outlived its deadline by more than `grace`.
    ///
    /// The daemon asks this before telling systemd's watchdog that all is well, so that a wedged
    /// dispatcher or a prober that ignores its deadline gets reachd restarted instead of leaving a
    /// verdict that no longer moves. (A dispatcher wedged while holding its lock never answers at
    /// all, which the watchdog treats the same way.)
    package func isMakingProgress(grace: Duration) -> Bool {
        let now = clock.uptime
        return state.withLock { state in
            if let due = state.dispatcherDue, now - due > grace { return false }
            return state.probesKeepTheirDeadlines(now: now, grace: grace)
        }
    }

    /// Probes until the calling task is cancelled, then cancels every probe in flight and returns
    /// once they have all ended.
    package func run() async {
        guard !targets.isEmpty else { return }
        let start = clock.uptime
        let controls = monitor.probeControl()
        let control = monitor.currentProbeControl
        state.withLock { state in
            state.suspended = control.isSuspended
            state.immediateRequestsSeen = control.immediateProbeRequests
            state.placeTicks(from: start)
            state.scheduleImmediate(at: start)
        }
        await withDiscardingTaskGroup { group in
            group.addTask { await self.follow(controls) }
            if let watcher = prober as? any WatchingProber {
                for target in targets where watcher.watches(target) {
                    group.addTask { await self.keepWatching(target, with: watcher) }
                }
            }
            await withTaskCancellationHandler {
                dispatch()
                await withCheckedContinuation { continuation in
                    let drained = state.withLock { state in
                        guard state.stopping, state.inFlight == 0 else {
                            state.drained = continuation
                            return false
                        }
                        return true
                    }
                    if drained { continuation.resume() }
                }
            } onCancel: {
                stop()
            }
            group.cancelAll()
        }
    }

    // MARK: Dispatching

    /// The timer to set after a dispatch, and the one it replaces.
    private struct Rearm {
        var due: Duration?
        var generation: UInt64
        var old: ProbeCancellation?
    }

    /// Starts every probe that is due and sets the timer for the next tick. Called by the timer,
    /// by a control change and by a finished probe that owes an immediate one, on any thread.
    private func dispatch() {
        let (due, rearm) = state.withLock { (state: inout ProbeSchedule) -> (ProbeSchedule.Due, Rearm?) in
            guard !state.stopping else { return (ProbeSchedule.Due(), nil) }
            // Read under the lock, so that a later start never carries an older epoch.
            let due = state.dueProbes(now: clock.uptime, epoch: monitor.probeEpoch)
            state.dispatcherDue = due.nextWake
            guard due.nextWake != state.armedDue else { return (due, nil) }
            state.generation += 1
            state.armedDue = due.nextWake
            defer { state.armed = nil }
            return (due, Rearm(due: due.nextWake, generation: state.generation, old: state.armed))
        }
        if let rearm {
            rearm.old?.cancel()
            if let when = rearm.due {
                let generation = rearm.generation
                let armed = timer.schedule(at: when, of: clock) { self.fire(generation) }
                let stale = state.withLock { state in
                    guard state.generation == generation, !state.stopping else { return true }
                    state.armed = armed
                    return false
                }
                if stale { armed.cancel() }
            }
        }
        if let observer {
            for index in due.skipped { observer.probeSkipped(targets[index]) }
        }
        for start in due.starts { launch(start) }
    }

    private func fire(_ generation: UInt64) {
        let current = state.withLock { state in
            guard state.generation == generation else { return false }
            (state.armedDue, state.armed) = (nil, nil)
            return true
        }
        if current { dispatch() }
    }

    private func launch(_ start: ProbeSchedule.Start) {
        let target = targets[start.index]
        // Read at the start itself, not at the dispatch: the last probe of a burst starts latest.
        observer?.probeStarted(target, lateness: start.tick.map { clock.uptime - $0 } ?? .zero)
        let began = clock.wallTime
        let whenDone: @Sendable (ProbeResult) -> Void = {
            self.finished(start, with: $0, span: ProbeSpan(began: began, ended: self.clock.wallTime))
        }
        let cancellation =
            starting?.start(target, whenDone: whenDone) ?? prober.startInTask(target, whenDone: whenDone)
        let cancelNow = state.withLock { state in
            // Stopping began between the start and here, so `stop()` could not see it.
            state.keep(cancellation, of: start.index, run: start.run) && state.stopping
        }
        if cancelNow { cancellation.cancel() }
    }

    private func finished(_ start: ProbeSchedule.Start, with result: ProbeResult, span: ProbeSpan) {
        let target = targets[start.index]
        if !order[start.index].apply(
            run: start.run,
            of: result,
            with: { deliver(result, of: target, epoch: start.epoch, span: span) }
        ) {
            observer?.probeSuperseded(target, result: result)
        }
        let (owed, drained) = state.withLock { state in
            state.end(start.index, run: start.run)
            let drained = state.stopping && state.inFlight == 0 ? state.drained.take() : nil
            return (!state.stopping && state.slots[start.index].immediateAt != nil, drained)
        }
        drained?.resume()
        if owed { dispatch() }
    }

    /// Stops the timer and cancels every probe in flight; `run()` returns when they have ended.
    private func stop() {
        let (cancellations, drained) = state.withLock { state in
            state.stopping = true
            state.generation += 1
            let cancellations = state.cancellations + [state.armed].compactMap { $0 }
            state.armed = nil
            return (cancellations, state.inFlight == 0 ? state.drained.take() : nil)
        }
        for cancellation in cancellations { cancellation.cancel() }
        drained?.resume()
    }

    private func deliver(_ result: ProbeResult, of target: ProbeTarget, epoch: ProbeEpoch, span: ProbeSpan? = nil) {
        observer?.probeFinished(target, result: result)
        if let variant = target.variant {
            monitor.record(result, variant: variant, epoch: epoch)
        } else {
            monitor.record(result, epoch: epoch, span: span)
        }
    }

    /// Holds `target`'s watch stream open while probing runs, one stream per epoch.
    ///
    /// While probing is suspended the stream is closed and stays closed: a watcher re-opening it
    /// (and checking once a second) through a link that is gone could only fail, and it would
    /// keep connecting while the system sleeps. When the epoch moves on (the link came back, the
    /// system woke) the stream is opened again even if the old one survived the flap, because
    /// what it pushes carries the epoch it opened in and would be dropped as stale.
    ///
    /// Pushed results are applied as they arrive, outside the start order of polled ones: a push
    /// is news of the moment it arrives, not of a probe's start.
    private func keepWatching(_ target: ProbeTarget, with watcher: any WatchingProber) async {
        var current: (epoch: ProbeEpoch, stream: Task<Void, Never>)?
        for await control in monitor.probeControl() {
            let wanted = control.isSuspended ? nil : monitor.probeEpoch
            guard wanted != current?.epoch else { continue }
            if let stream = current?.stream {
                stream.cancel()
                await stream.value
            }
            current = wanted.map { epoch in
                (
                    epoch,
                    Task {
                        await watcher.watch(target, epoch: { self.monitor.probeEpoch }) { result, epoch in
                            self.deliver(result, of: target, epoch: epoch)
                        }
                    }
                )
            }
        }
        if let stream = current?.stream {
            stream.cancel()
            await stream.value
        }
    }

    /// Applies the monitor's suspensions and immediate-probe requests as they change.
    private func follow(_ controls: Subscription<ProbeControl>) async {
        for await control in controls {
            let changed = state.withLock { state in
                let wasSuspended = state.suspended
                state.suspended = control.isSuspended
                defer { state.immediateRequestsSeen = control.immediateProbeRequests }
                if control.immediateProbeRequests > state.immediateRequestsSeen {
                    state.scheduleImmediate(at: clock.uptime)
                    return true
                }
                return wasSuspended != state.suspended
            }
            if changed { dispatch() }
            followed.withLock { $0 = control }
        }
    }

    /// The last of the monitor's probe controls that ``run()`` has acted on (the probes it called
    /// for are started): a caller that changed the control can tell when the scheduler followed.
    package var followedProbeControl: ProbeControl? { followed.withLock { $0 } }
}

/// Which probe of one target was applied last, so that results are applied in start order.
private final class ResultOrder: Sendable {
    private let state = Mutex<(applied: UInt64, superseded: UInt64)>((0, 0))

    var superseded: UInt64 { state.withLock { $0.superseded } }

    /// Calls `record` unless a probe that started after `run` has been applied already, and says
    /// whether it did. The check and `record` happen under one lock: two results of the target
    /// that arrive together on different threads are recorded in the order of the check.
    ///
    /// A cancelled result is no evidence (the monitor drops it): it is passed on, but never makes
    /// an older result stale.
    func apply(run: UInt64, of result: ProbeResult, with record: () -> Void) -> Bool {
        state.withLock { state in
            if result.failure?.reason != .cancelled {
                guard run > state.applied else {
                    state.superseded += 1
                    return false
                }
                state.applied = run
            }
            record()
            return true
        }
    }
}
