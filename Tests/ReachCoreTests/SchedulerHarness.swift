import Logging
import ReachCore
import ReachSupport
import ReachTesting
import Synchronization
import Testing

/// A prober that records when each probe started on the test clock, and either answers at once or
/// holds the probe until the test releases it. Several probes of one target may be held at once
/// (the scheduler overlaps them while a server hangs); each is known by when it started.
final class ScriptedProber: WatchingProber, StartingProber {
    struct Call: Equatable {
        var target: String
        var at: Duration
    }

    private struct Held {
        var id: Int
        var target: String
        var at: Duration
        var continuation: CheckedContinuation<ProbeResult, Never>
    }

    private struct State {
        var calls: [Call] = []
        var holding = false
        var held: [Held] = []
        var nextID = 0
        var answer: @Sendable (String) -> ProbeResult = { .ok($0) }
        var streams: [WatchStream] = []
        var cancelRequests = 0
        var answersCancellation = true
        /// Probes started by the scheduler whose task has not yet handed its result back.
        var unfinished = 0
    }

    private let state = Mutex(State())
    private let clock: MonitorClock
    private let watched: Set<String>

    init(clock: MonitorClock, watched: Set<String> = []) {
        self.clock = clock
        self.watched = watched
    }

    var calls: [Call] { state.withLock { $0.calls } }
    var callTimes: [Duration] { calls.map(\.at) }
    func calls(of target: String) -> [Duration] { calls.filter { $0.target == target }.map(\.at) }

    /// From now on, probes wait for ``release(_:with:)`` or ``finish(_:startedAt:with:)``.
    func hold() { state.withLock { $0.holding = true } }

    /// From now on, probes answer at once; those already held keep waiting.
    func stopHolding() { state.withLock { $0.holding = false } }

    func answer(with answer: @escaping @Sendable (String) -> ProbeResult) { state.withLock { $0.answer = answer } }

    /// Whether a cancelled probe ends at once (with `cancelled`), or only when the test finishes it.
    func answerCancellation(_ answers: Bool) { state.withLock { $0.answersCancellation = answers } }

    /// How many times the scheduler cancelled a probe.
    var cancelRequests: Int { state.withLock { $0.cancelRequests } }

    /// When each held probe of `target` started, oldest first.
    func held(_ target: String) -> [Duration] { state.withLock { $0.held.filter { $0.target == target }.map(\.at) } }

    /// Ends the oldest held probe of `target` and stops holding new ones.
    func release(_ target: String, with result: ProbeResult? = nil) {
        let (held, answer) = state.withLock { state in
            state.holding = false
            let index = state.held.firstIndex { $0.target == target }
            return (index.map { state.held.remove(at: $0) }, state.answer)
        }
        held?.continuation.resume(returning: result ?? answer(target))
    }

    /// Ends the held probe of `target` that started at `at`; new probes are still held.
    func finish(_ target: String, startedAt at: Duration, with result: ProbeResult) {
        let held = state.withLock { state in
            state.held.firstIndex { $0.target == target && $0.at == at }.map { state.held.remove(at: $0) }
        }
        guard let held else {
            Issue.record("no probe of \(target) started at \(at) is held")
            return
        }
        held.continuation.resume(returning: result)
    }

    func probe(_ target: ProbeTarget) async -> ProbeResult {
        let now = clock.uptime
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate: ProbeResult? = state.withLock { state in
                    state.calls.append(Call(target: target.name, at: now))
                    guard state.holding else { return state.answer(target.name) }
                    state.held.append(Held(id: id, target: target.name, at: now, continuation: continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let held = state.withLock { state in
                state.cancelRequests += 1
                guard state.answersCancellation else { return nil as Held? }
                return state.held.firstIndex { $0.id == id }.map { state.held.remove(at: $0) }
            }
            held?.continuation.resume(returning: .failure(target.name, .cancelled, phase: .connect, latency: .zero))
        }
    }

    /// Started as ``Prober/startInTask(_:whenDone:)`` does (a task per probe), but counted until the
    /// scheduler has taken the result, so a test can tell when every answered probe is recorded.
    func start(_ target: ProbeTarget, whenDone: @escaping @Sendable (ProbeResult) -> Void) -> ProbeCancellation {
        state.withLock { $0.unfinished += 1 }
        let task = Task {
            whenDone(await probe(target))
            state.withLock { $0.unfinished -= 1 }
        }
        return ProbeCancellation { task.cancel() }
    }

    /// How many started probes have an answer (or are about to be held) that the scheduler has not
    /// yet taken: those held wait for the test, not for the scheduler.
    var unsettled: Int { state.withLock { $0.unfinished - $0.held.count } }

    func watches(_ target: ProbeTarget) -> Bool { watched.contains(target.name) }

    /// One `watch` call: open until the scheduler cancels it.
    struct WatchStream: Sendable {
        var target: String
        var epoch: ProbeEpoch
        var report: @Sendable (ProbeResult, ProbeEpoch) -> Void
        var isOpen = true
    }

    func watch(
        _ target: ProbeTarget,
        epoch: @escaping @Sendable () -> ProbeEpoch,
        report: @escaping @Sendable (ProbeResult, ProbeEpoch) -> Void
    ) async {
        let index = state.withLock { state in
            state.streams.append(WatchStream(target: target.name, epoch: epoch(), report: report))
            return state.streams.count - 1
        }
        try? await Task.sleep(for: .seconds(3600))  // a stream held open on purpose, until cancelled
        state.withLock { $0.streams[index].isOpen = false }
    }

    /// Pushes a result as a watch stream would, with the epoch the stream opened in: through the
    /// stream opened `stream`-th (by default the latest), even if it has since been closed.
    func push(_ result: ProbeResult, stream: Int? = nil) {
        let watcher = state.withLock { state in
            stream.map { state.streams[$0] } ?? state.streams.last { $0.target == result.target }
        }
        guard let watcher else { return }
        watcher.report(result, watcher.epoch)
    }

    /// Every stream ever opened, in order.
    var streams: [WatchStream] { state.withLock { $0.streams } }
    var openStreamCount: Int { streams.filter(\.isOpen).count }
}

/// Counts what the scheduler tells its observer.
final class CountingObserver: ProbeObserver {
    private let counts = Mutex<
        (started: Int, skipped: Int, finished: Int, superseded: [ProbeResult], lateness: [Duration])
    >(
        (0, 0, 0, [], [])
    )

    func probeStarted(_ target: ProbeTarget, lateness: Duration) {
        counts.withLock {
            $0.started += 1
            $0.lateness.append(lateness)
        }
    }
    func probeSkipped(_ target: ProbeTarget) { counts.withLock { $0.skipped += 1 } }
    func probeFinished(_ target: ProbeTarget, result: ProbeResult) { counts.withLock { $0.finished += 1 } }
    func probeSuperseded(_ target: ProbeTarget, result: ProbeResult) {
        counts.withLock { $0.superseded.append(result) }
    }

    var superseded: [ProbeResult] { counts.withLock { $0.superseded } }

    var skipped: Int { counts.withLock { $0.skipped } }
    var finished: Int { counts.withLock { $0.finished } }
    var lateness: [Duration] { counts.withLock { $0.lateness } }
}

/// The default timer (a task asleep on the monitor clock until the tick), which also tells whether
/// a tick that has come due is still to be acted on.
final class TrackedProbeTimer: ProbeTimer {
    private struct State {
        var nextID = 0
        /// When each armed tick is due, until it has fired (its body returned) or was cancelled.
        var armed: [Int: Duration] = [:]
    }

    private let state = Mutex(State())

    func schedule(
        at uptime: Duration,
        of clock: MonitorClock,
        _ body: @escaping @Sendable () -> Void
    ) -> ProbeCancellation {
        let id = state.withLock { state in
            state.nextID += 1
            state.armed[state.nextID] = uptime
            return state.nextID
        }
        let task = Task {
            defer { state.withLock { _ = $0.armed.removeValue(forKey: id) } }
            guard (try? await clock.sleep(for: uptime - clock.uptime)) != nil else { return }
            body()
        }
        return ProbeCancellation { task.cancel() }
    }

    /// Whether a tick due at `now` or before has not yet fired.
    func hasDueTicks(now: Duration) -> Bool {
        state.withLock { $0.armed.values.contains { $0 <= now } }
    }

    /// How many ticks are armed and have neither fired nor been cancelled.
    var armedCount: Int { state.withLock { $0.armed.count } }
}

/// A scheduler on the monitor harness's test clock, running for the test's lifetime.
final class SchedulerHarness: Sendable {
    let monitorHarness: MonitorHarness
    let prober: ScriptedProber
    let observer = CountingObserver()
    let timer = TrackedProbeTimer()
    let scheduler: ProbeScheduler
    private let runner: Task<Void, Never>

    init(targets: [ProbeTarget], watched: Set<String> = [], links: LinkSnapshot = .of(.usable()), holding: Bool = false)
    {
        monitorHarness = MonitorHarness(targets: targets) { $0.linkSettleWindow = .zero }
        monitorHarness.monitor.update(links: links)
        prober = ScriptedProber(clock: monitorHarness.clock.monitorClock, watched: watched)
        if holding { prober.hold() }
        scheduler = ProbeScheduler(
            targets: targets,
            prober: prober,
            monitor: monitorHarness.monitor,
            clock: monitorHarness.clock.monitorClock,
            observer: observer,
            timer: timer
        )
        let scheduler = self.scheduler
        runner = Task { await scheduler.run() }
    }

    var clock: TestClock { monitorHarness.clock }
    var monitor: ConnectivityMonitor { monitorHarness.monitor }

    /// Advances the clock in steps, letting the scheduler act at each step.
    func advance(by total: Duration, step: Duration = .milliseconds(5)) async throws {
        var advanced = Duration.zero
        while advanced < total {
            try await settle()
            clock.advance(by: step)
            advanced += step
        }
        try await settle()
    }

    /// Waits until the scheduler has acted on everything due: it has followed the monitor's latest
    /// probe control, every tick that came due has fired, every probe that has its answer is
    /// recorded (with any probe it owed started), and every tick armed for later sleeps on the clock
    /// (a timer task that had not yet begun to sleep would start counting from a later time).
    func settle() async throws {
        try await clock.waitForSleepers(1)
        try await waitUntil("the scheduler acted on everything due") {
            self.scheduler.followedProbeControl == self.monitor.currentProbeControl
                && !self.timer.hasDueTicks(now: self.clock.monitorClock.uptime) && self.prober.unsettled == 0
                && self.clock.sleeperCount >= self.timer.armedCount
        }
    }

    func waitForCalls(_ count: Int) async throws {
        try await waitUntil("\(count) probes", timeout: .seconds(5)) { self.prober.calls.count >= count }
    }

    func stop() async {
        await stopScheduling()
        await monitorHarness.stop()
    }

    /// Cancels the scheduler's `run()` and returns when it has.
    func stopScheduling() async {
        runner.cancel()
        await runner.value
    }

    deinit { runner.cancel() }
}
