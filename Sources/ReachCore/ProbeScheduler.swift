import HeapModule
import Synchronization

/// Probes every target at its own cadence and hands each result to the monitor.
///
/// Each target ticks on a fixed grid (`interval`, default 1 s) whose phase is spread evenly over the
/// interval, so a thousand targets do not fire in the same millisecond. A tick that finds the
/// target's previous probe still running is skipped and counted: there is never more than one
/// probe in flight per target. The monitor's ``ProbeControl`` drives the rest: nothing is probed
/// while it says suspended (no usable link, system asleep), and every target is probed at once on
/// start and whenever its immediate-probe counter grows (link regained, system woke, a client
/// asked). Such a burst is spread over a millisecond per target, at most half the interval: one
/// target is probed at once, a thousand do not open a thousand connections in the same instant.
///
/// One timer keeps the grid: each time it fires, the due probes start and it is set for the next
/// tick. With the daemon's timer on an event loop and a ``StartingProber``, a tick starts its
/// probes on that loop and each result is recorded where it arrives: no task and no thread hop per
/// probe. Other probers run each probe in a task of its own.
public final class ProbeScheduler: Sendable {
    private let targets: [ProbeTarget]
    private let prober: any Prober
    /// `prober` as a ``StartingProber``, cast once: a dynamic cast per probe showed in profiles.
    private let starting: (any StartingProber)?
    private let monitor: ConnectivityMonitor
    private let clock: MonitorClock
    private let timer: any ProbeTimer
    private let observer: (any ProbeObserver)?
    private let state: Mutex<State>

    /// - Parameter timer: Where the ticks fire; by default a task asleep on `clock`.
    public init(
        targets: [ProbeTarget], prober: any Prober, monitor: ConnectivityMonitor, clock: MonitorClock,
        observer: (any ProbeObserver)? = nil, timer: any ProbeTimer = SleepingProbeTimer()
    ) {
        self.targets = targets
        self.prober = prober
        self.starting = prober as? any StartingProber
        self.monitor = monitor
        self.clock = clock
        self.timer = timer
        self.observer = observer
        self.state = Mutex(State(count: targets.count))
    }

    /// How many ticks of each target were skipped because its previous probe was still running.
    public var skippedTicks: [String: UInt64] {
        state.withLock { state in
            Dictionary(uniqueKeysWithValues: zip(targets.map(\.name), state.slots.map(\.skipped)))
        }
    }

    /// Whether the scheduler is keeping time: its dispatcher woke when it meant to, give or take
    /// `grace`, and no probe has outlived its deadline by more than `grace`.
    ///
    /// The daemon asks this before telling systemd's watchdog that all is well, so that a wedged
    /// dispatcher or a prober that ignores its deadline gets reachd restarted instead of leaving a
    /// verdict that no longer moves. (A dispatcher wedged while holding its lock never answers at
    /// all, which the watchdog treats the same way.)
    public func isMakingProgress(grace: Duration) -> Bool {
        let now = clock.uptime
        return state.withLock { state in
            if let due = state.dispatcherDue, now - due > grace { return false }
            for index in state.slots.indices where state.slots[index].inFlight {
                if let started = state.slots[index].lastStart, now - started > targets[index].timeout + grace { return false }
            }
            return true
        }
    }

    /// Probes until the calling task is cancelled, then cancels the probes in flight and returns
    /// once they have ended.
    public func run() async {
        guard !targets.isEmpty else { return }
        let start = clock.uptime
        let controls = monitor.probeControl()
        let control = monitor.currentProbeControl
        state.withLock { state in
            state.suspended = control.isSuspended
            state.immediateRequestsSeen = control.immediateProbeRequests
            for index in targets.indices {
                let phase = targets[index].interval * (Double(index) / Double(targets.count))
                state.ticks.insert(Tick(due: start + phase, index: index))
            }
            scheduleImmediate(&state, at: start)
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

    private struct Tick: Comparable {
        var due: Duration
        var index: Int

        static func < (lhs: Tick, rhs: Tick) -> Bool { (lhs.due, lhs.index) < (rhs.due, rhs.index) }
    }

    private struct Slot {
        var inFlight = false
        /// Which probe is in flight, and how to cancel it.
        var run: UInt64 = 0
        var cancellation: ProbeCancellation?
        /// When an immediate probe is owed, the moment it may start.
        var immediateAt: Duration?
        var lastStart: Duration?
        var skipped: UInt64 = 0
    }

    private struct State {
        var slots: [Slot]
        var ticks = Heap<Tick>()
        var suspended = false
        var immediateRequestsSeen: UInt64 = 0
        /// How many slots owe an immediate probe: the dispatcher looks through the slots only then.
        var owedImmediates = 0
        /// When the dispatcher, now waiting, means to wake next.
        var dispatcherDue: Duration?
        /// The timer set for `dispatcherDue`; a timer of an older generation is stale.
        var armedDue: Duration?
        var armed: ProbeCancellation?
        var generation: UInt64 = 0
        var runs: UInt64 = 0
        var inFlight = 0
        var stopping = false
        /// `run()`, waiting for the probes in flight to end after it was cancelled.
        var drained: CheckedContinuation<Void, Never>?

        init(count: Int) {
            slots = Array(repeating: Slot(), count: count)
        }
    }

    /// The timer to set after a dispatch, and the one it replaces.
    private struct Rearm {
        var due: Duration?
        var generation: UInt64
        var old: ProbeCancellation?
    }

    private struct Start {
        var index: Int
        var run: UInt64
        var lateness: Duration
        var epoch: ProbeEpoch
    }

    /// Owes every target an immediate probe, a millisecond apart, within half its interval.
    private func scheduleImmediate(_ state: inout State, at now: Duration) {
        let count = state.slots.count
        for index in state.slots.indices {
            let spread = min(targets[index].interval / 2, .milliseconds(count))
            state.slots[index].immediateAt = now + spread * (Double(index) / Double(count))
        }
        state.owedImmediates = count
    }

    /// Takes every probe that is due and says when to look again.
    private func dueProbes(_ state: inout State, now: Duration) -> (starts: [Start], nextWake: Duration?) {
        var starts: [Start] = []
        let epoch = monitor.probeEpoch
        if !state.suspended, state.owedImmediates > 0 {
            for index in state.slots.indices {
                guard let at = state.slots[index].immediateAt, at <= now, !state.slots[index].inFlight else { continue }
                state.slots[index].immediateAt = nil
                state.owedImmediates -= 1
                let run = begin(&state, index, now: now)
                starts.append(Start(index: index, run: run, lateness: .zero, epoch: epoch))
            }
        }
        while let tick = state.ticks.min, tick.due <= now {
            var next = state.ticks.removeMin()
            let interval = targets[tick.index].interval
            next.due += interval
            let slot = state.slots[tick.index]
            if state.suspended {
                // Nothing is owed for ticks that fall in a suspension.
            } else if let last = slot.lastStart, now - last < interval / 2 {
                // An immediate probe just started; this tick would only repeat it.
            } else if slot.inFlight {
                state.slots[tick.index].skipped += 1
                observer?.probeSkipped(targets[tick.index])
            } else {
                let run = begin(&state, tick.index, now: now)
                starts.append(Start(index: tick.index, run: run, lateness: now - tick.due, epoch: epoch))
            }
            if next.due <= now {
                // The dispatcher itself fell behind by more than an interval: rejoin the grid.
                let missed = Int(((now - next.due) / interval).rounded(.down)) + 1
                next.due += interval * missed
            }
            state.ticks.insert(next)
        }
        var nextWake = state.ticks.min?.due
        if !state.suspended, state.owedImmediates > 0 {
            for slot in state.slots where !slot.inFlight {
                if let at = slot.immediateAt { nextWake = min(nextWake ?? at, at) }
            }
        }
        return (starts, nextWake)
    }

    private func begin(_ state: inout State, _ index: Int, now: Duration) -> UInt64 {
        state.runs += 1
        state.inFlight += 1
        state.slots[index].inFlight = true
        state.slots[index].run = state.runs
        state.slots[index].lastStart = now
        return state.runs
    }

    /// Starts every probe that is due and sets the timer for the next tick. Called by the timer,
    /// by a control change and by a finished probe that owes an immediate one, on any thread.
    private func dispatch() {
        let (starts, rearm) = state.withLock { (state: inout State) -> ([Start], Rearm?) in
            guard !state.stopping else { return ([], nil) }
            let (starts, nextWake) = dueProbes(&state, now: clock.uptime)
            state.dispatcherDue = nextWake
            guard nextWake != state.armedDue else { return (starts, nil) }
            state.generation += 1
            state.armedDue = nextWake
            defer { state.armed = nil }
            return (starts, Rearm(due: nextWake, generation: state.generation, old: state.armed))
        }
        if let rearm {
            rearm.old?.cancel()
            if let due = rearm.due {
                let generation = rearm.generation
                let armed = timer.schedule(at: due, of: clock) { self.fire(generation) }
                let stale = state.withLock { state in
                    guard state.generation == generation, !state.stopping else { return true }
                    state.armed = armed
                    return false
                }
                if stale { armed.cancel() }
            }
        }
        for start in starts { launch(start) }
    }

    private func fire(_ generation: UInt64) {
        let current = state.withLock { state in
            guard state.generation == generation else { return false }
            (state.armedDue, state.armed) = (nil, nil)
            return true
        }
        if current { dispatch() }
    }

    private func launch(_ start: Start) {
        let target = targets[start.index]
        observer?.probeStarted(target, lateness: start.lateness)
        let whenDone: @Sendable (ProbeResult) -> Void = { self.finished(start, with: $0) }
        let cancellation =
            starting?.start(target, whenDone: whenDone) ?? prober.startInTask(target, whenDone: whenDone)
        let cancelNow = state.withLock { state in
            guard state.slots[start.index].inFlight, state.slots[start.index].run == start.run else { return false }
            state.slots[start.index].cancellation = cancellation
            // Stopping began between the start and here, so `stop()` could not see it.
            return state.stopping
        }
        if cancelNow { cancellation.cancel() }
    }

    private func finished(_ start: Start, with result: ProbeResult) {
        deliver(result, of: targets[start.index], epoch: start.epoch)
        let (owed, drained) = state.withLock { state in
            state.slots[start.index].inFlight = false
            state.slots[start.index].cancellation = nil
            state.inFlight -= 1
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
            let cancellations = state.slots.compactMap(\.cancellation) + [state.armed].compactMap { $0 }
            state.armed = nil
            return (cancellations, state.inFlight == 0 ? state.drained.take() : nil)
        }
        for cancellation in cancellations { cancellation.cancel() }
        drained?.resume()
    }

    private func deliver(_ result: ProbeResult, of target: ProbeTarget, epoch: ProbeEpoch) {
        observer?.probeFinished(target, result: result)
        monitor.record(result, epoch: epoch)
    }

    /// Holds `target`'s watch stream open while probing runs, one stream per epoch.
    ///
    /// While probing is suspended the stream is closed and stays closed: a watcher re-opening it
    /// (and checking once a second) through a link that is gone could only fail, and it would
    /// keep connecting while the system sleeps. When the epoch moves on (the link came back, the
    /// system woke) the stream is opened again even if the old one survived the flap, because
    /// what it pushes carries the epoch it opened in and would be dropped as stale.
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
                (epoch, Task {
                    await watcher.watch(target, epoch: { self.monitor.probeEpoch }) { result, epoch in
                        self.deliver(result, of: target, epoch: epoch)
                    }
                })
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
                    scheduleImmediate(&state, at: clock.uptime)
                    return true
                }
                return wasSuspended != state.suspended
            }
            if changed { dispatch() }
        }
    }
}
