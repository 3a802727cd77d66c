import ReachSupport
import Synchronization

/// A clock that moves only when a test advances it, so timeouts and windows are tested exactly and instantly.
package final class TestClock: Clock, Sendable {
    package struct Instant: InstantProtocol {
        package var offset: Duration

        package func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        package func duration(to other: Instant) -> Duration { other.offset - offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        /// How far the wall clock was set away from `wallTimeAtStart + now`.
        var wallJump: Duration = .zero
        var sleepers: [UInt64: Sleeper] = [:]
        var lastSleeperID: UInt64 = 0
    }

    private let state = Mutex(State())
    /// The wall time at offset zero.
    package let wallTimeAtStart: WallTime

    package init(wallTimeAtStart: WallTime = WallTime(sinceEpoch: .seconds(1_800_000_000))) {
        self.wallTimeAtStart = wallTimeAtStart
    }

    package var now: Instant { state.withLock { $0.now } }
    package var minimumResolution: Duration { .zero }

    /// The clock the monitor takes, reading this test clock for both uptime and wall time.
    package var monitorClock: MonitorClock {
        MonitorClock(self) { [self] in state.withLock { wallTimeAtStart.advanced(by: $0.now.offset + $0.wallJump) } }
    }

    /// Sets the wall clock `jump` away (back when negative), as an administrator or NTP would;
    /// the monotonic time, and so every sleeper, does not notice.
    package func setWallClock(by jump: Duration) {
        state.withLock { $0.wallJump += jump }
    }

    /// How many tasks are asleep on this clock.
    package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.lastSleeperID += 1
            return state.lastSleeperID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes, in deadline order, every sleeper whose deadline has come.
    package func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }.sorted {
                $0.value.deadline < $1.value.deadline
            }
            for (id, _) in due { state.sleepers[id] = nil }
            return due.map(\.value.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// Waits (in real time, up to `timeout`) until at least `count` tasks sleep on this clock.
    package func waitForSleepers(_ count: Int = 1, timeout: Duration = .seconds(10)) async throws {
        try await waitUntil("\(count) sleeper(s) on the test clock", timeout: timeout) { self.sleeperCount >= count }
    }
}
