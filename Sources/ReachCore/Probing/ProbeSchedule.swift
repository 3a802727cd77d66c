import HeapModule

/// What ``ProbeScheduler`` keeps under its lock, and the decisions it takes from it: which ticks
/// and immediate probes are due, whether a probe may start beside those still in flight, and which
/// ticks are skipped. Pure bookkeeping: no clock, no I/O, no callbacks.
struct ProbeSchedule {
    struct Tick: Comparable {
        var due: Duration
        var index: Int

        static func < (lhs: Tick, rhs: Tick) -> Bool { (lhs.due, lhs.index) < (rhs.due, rhs.index) }
    }

    /// One probe in flight, and how to cancel it.
    struct Running {
        var run: UInt64
        var started: Duration
        var cancellation: ProbeCancellation?
    }

    struct Slot {
        let interval: Duration
        let timeout: Duration
        /// The target's ``ProbeTarget/coalescing``, at most a twentieth of its interval.
        let coalescing: Duration
        /// How many probes of this target may be in flight at once (see ``ProbeScheduler/maximumOverlap(interval:timeout:)``).
        let maximumOverlap: Int
        /// The probes in flight, oldest first.
        var running: [Running] = []
        /// When an immediate probe is owed, the moment it may start.
        var immediateAt: Duration?
        var lastStart: Duration?
        var skipped: UInt64 = 0

        /// Whether one more probe may start beside those in flight.
        var hasRoom: Bool { running.count < maximumOverlap }
    }

    /// A probe to launch once the lock is released.
    struct Start {
        var index: Int
        var run: UInt64
        /// The tick it is for; `nil` for an immediate probe.
        var tick: Duration?
        var epoch: ProbeEpoch
    }

    /// How soon after a probe of a target a tick of it would only repeat that probe, and is passed
    /// over: half its interval, at most half a second.
    ///
    /// The cap keeps a long interval's promise. A family check ticks every 10 s; passing over a
    /// tick 4 s after an immediate probe (a route change asks for one) left 14 s between two
    /// checks, and a family that broke in between was told after 16 s instead of 12.5. With the cap,
    /// two probes of a target are never more than its interval and half a second apart.
    static func repeatWindow(interval: Duration) -> Duration {
        min(interval / 2, .milliseconds(500))
    }

    /// The longest two results of a target can be apart while it is probed on schedule: two of
    /// its probes start at most its interval and ``repeatWindow(interval:)`` apart, and each
    /// answers within its timeout.
    static func longestGapBetweenResults(interval: Duration, timeout: Duration) -> Duration {
        interval + repeatWindow(interval: interval) + timeout
    }

    /// The most ticks that share one wake-up: more windows than the coalescing window allows
    /// when the targets are that many, so that the last probe of a burst does not start late.
    static let maximumBurst = 10

    /// What a dispatch found: probes to start, ticks skipped (by target index), when to look again.
    struct Due {
        var starts: [Start] = []
        var skipped: [Int] = []
        var nextWake: Duration?
    }

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
    /// Numbers every probe in start order, over all targets: a result's run says which is newer.
    var runs: UInt64 = 0
    var inFlight = 0
    var stopping = false
    /// `run()`, waiting for the probes in flight to end after it was cancelled.
    var drained: CheckedContinuation<Void, Never>?

    init(targets: [ProbeTarget]) {
        slots = targets.map { target in
            Slot(
                interval: target.interval,
                timeout: target.timeout,
                coalescing: min(target.coalescing, target.interval / 20),
                maximumOverlap: ProbeScheduler.maximumOverlap(interval: target.interval, timeout: target.timeout)
            )
        }
    }

    /// Puts every target's first tick on the grid, phases spread evenly over its interval and
    /// rounded down to its coalescing window, so that targets close in phase share a wake-up.
    ///
    /// The grid starts at the first multiple of the window at or after `start`: two schedulers on
    /// one event loop (the targets' and their variants', ``ProbeVariant``) then tick at the same
    /// instants and share their wake-ups too.
    mutating func placeTicks(from start: Duration) {
        for index in slots.indices {
            ticks.insert(Tick(due: Self.aligned(start, to: slots[index].coalescing) + phase(of: index), index: index))
        }
    }

    /// `start` rounded up to a multiple of `window`; `start` itself without a window.
    static func aligned(_ start: Duration, to window: Duration) -> Duration {
        guard window > .zero, start > .zero else { return start }
        return window * Int((start / window).rounded(.up))
    }

    /// Where in its interval a target ticks: its even share of the interval, rounded down to the
    /// start of its window. There are as many windows as the coalescing window fits in the
    /// interval, or more when that would put over ``maximumBurst`` targets in one.
    func phase(of index: Int) -> Duration {
        let slot = slots[index]
        let count = slots.count
        let evenShare = slot.interval * (Double(index) / Double(count))
        guard slot.coalescing > .zero else { return evenShare }
        let fitting = Int((slot.interval / slot.coalescing).rounded(.down))
        let windows = max(fitting, (count + Self.maximumBurst - 1) / Self.maximumBurst)
        // A window each, or more: nothing to share.
        guard windows < count else { return evenShare }
        // Whole windows, counted in integers: a phase a rounding error short of a window's edge
        // must not fall into the window before.
        return slot.interval / windows * (index * windows / count)
    }

    /// Owes every target an immediate probe, a millisecond apart, within half its interval.
    mutating func scheduleImmediate(at now: Duration) {
        let count = slots.count
        for index in slots.indices {
            let spread = min(slots[index].interval / 2, .milliseconds(count))
            slots[index].immediateAt = now + spread * (Double(index) / Double(count))
        }
        owedImmediates = count
    }

    /// Takes every probe that is due and says when to look again.
    ///
    /// An owed immediate probe starts when its moment comes if the target has room for one more
    /// probe in flight; otherwise it waits for one to end. A tick starts a probe unless probing is
    /// suspended, a probe of the target started within its ``repeatWindow(interval:)`` (an immediate
    /// probe: the tick would only repeat it), or the target is at its ``Slot/maximumOverlap``; only
    /// that last case is a skip, and counted.
    mutating func dueProbes(now: Duration, epoch: ProbeEpoch) -> Due {
        var due = Due()
        if !suspended, owedImmediates > 0 {
            for index in slots.indices {
                guard let at = slots[index].immediateAt, at <= now, slots[index].hasRoom else { continue }
                slots[index].immediateAt = nil
                owedImmediates -= 1
                due.starts.append(Start(index: index, run: begin(index, now: now), tick: nil, epoch: epoch))
            }
        }
        while let tick = ticks.min, tick.due <= now {
            var next = ticks.removeMin()
            let index = tick.index
            let interval = slots[index].interval
            next.due += interval
            if suspended {
                // Nothing is owed for ticks that fall in a suspension.
            } else if let last = slots[index].lastStart, now - last < Self.repeatWindow(interval: interval) {
                // An immediate probe just started; this tick would only repeat it.
            } else if slots[index].hasRoom {
                due.starts.append(Start(index: index, run: begin(index, now: now), tick: tick.due, epoch: epoch))
            } else {
                slots[index].skipped += 1
                due.skipped.append(index)
            }
            if next.due <= now {
                // The dispatcher itself fell behind by more than an interval: rejoin the grid.
                let missed = Int(((now - next.due) / interval).rounded(.down)) + 1
                next.due += interval * missed
            }
            ticks.insert(next)
        }
        due.nextWake = ticks.min?.due
        if !suspended, owedImmediates > 0 {
            for slot in slots where slot.hasRoom {
                if let at = slot.immediateAt { due.nextWake = min(due.nextWake ?? at, at) }
            }
        }
        return due
    }

    private mutating func begin(_ index: Int, now: Duration) -> UInt64 {
        runs += 1
        inFlight += 1
        slots[index].running.append(Running(run: runs, started: now))
        slots[index].lastStart = now
        return runs
    }

    /// Keeps how to cancel a probe that has started, unless it has already ended.
    mutating func keep(_ cancellation: ProbeCancellation, of index: Int, run: UInt64) -> Bool {
        guard let position = slots[index].running.firstIndex(where: { $0.run == run }) else { return false }
        slots[index].running[position].cancellation = cancellation
        return true
    }

    /// Forgets a probe that has ended.
    mutating func end(_ index: Int, run: UInt64) {
        guard let position = slots[index].running.firstIndex(where: { $0.run == run }) else { return }
        slots[index].running.remove(at: position)
        inFlight -= 1
    }

    /// Whether no probe in flight has outlived its deadline by more than `grace`.
    func probesKeepTheirDeadlines(now: Duration, grace: Duration) -> Bool {
        slots.allSatisfy { slot in
            // The oldest probe is the first to outlive the deadline they all share.
            guard let oldest = slot.running.first else { return true }
            return now - oldest.started <= slot.timeout + grace
        }
    }

    /// Every probe in flight's cancellation.
    var cancellations: [ProbeCancellation] {
        slots.flatMap { $0.running.compactMap(\.cancellation) }
    }
}
