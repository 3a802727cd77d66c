/// Time as the core sees it: monotonic uptime for deadlines and freshness, wall time for display,
/// and sleeping.
///
/// It wraps any `Clock` so that production runs on `ContinuousClock` and tests on a manual clock
/// they advance by hand, without making every core type generic over the clock.
public struct MonitorClock: Sendable {
    private let readUptime: @Sendable () -> Duration
    private let readWallTime: @Sendable () -> WallTime
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// - Parameters:
    ///   - clock: The monotonic clock; uptime counts from the moment this initializer runs.
    ///   - wallTime: Reads the calendar time (in production, the system's real-time clock).
    public init<C: Clock>(_ clock: C, wallTime: @escaping @Sendable () -> WallTime) where C.Duration == Duration {
        let origin = clock.now
        self.readUptime = { origin.duration(to: clock.now) }
        self.readWallTime = wallTime
        self.sleeper = { try await clock.sleep(for: $0) }
    }

    /// Monotonic time since this clock was made.
    public var uptime: Duration { readUptime() }

    public var wallTime: WallTime { readWallTime() }

    /// Suspends for `duration`; throws `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await sleeper(duration)
    }

    /// Suspends until ``uptime`` reaches `deadline` (at once when it has): a wait decided at one
    /// moment and begun later, on a loaded machine, still ends when it was meant to.
    package func sleep(untilUptime deadline: Duration) async throws {
        try await sleeper(max(.zero, deadline - uptime))
    }
}
