import ReachSupport

/// Calls the probe scheduler back at a moment of the monitor clock's uptime.
///
/// The scheduler keeps its grid through a timer rather than a task asleep between ticks so that
/// the daemon can put the ticks on the event loop its probes run on: a tick then starts its
/// probes, and their results are recorded, on that one thread, with no hop. Tests and embedders
/// keep the default, ``SleepingProbeTimer``, which a test clock drives.
package protocol ProbeTimer: Sendable {
    /// Calls `body` once at `uptime` of `clock` (at once if that has passed), unless cancelled first.
    func schedule(
        at uptime: Duration,
        of clock: MonitorClock,
        _ body: @escaping @Sendable () -> Void
    ) -> ProbeCancellation
}

/// A task asleep on the monitor clock until the moment comes.
package struct SleepingProbeTimer: ProbeTimer {
    /// The timer needs nothing but the clock it is handed with each tick.
    package init() {}

    /// Sleeps in a task of its own: a test clock's `advance` fires it.
    package func schedule(
        at uptime: Duration,
        of clock: MonitorClock,
        _ body: @escaping @Sendable () -> Void
    ) -> ProbeCancellation {
        let task = Task {
            guard (try? await clock.sleep(for: uptime - clock.uptime)) != nil else { return }
            body()
        }
        return ProbeCancellation { task.cancel() }
    }
}
