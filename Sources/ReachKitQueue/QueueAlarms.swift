import ReachSupport
import Synchronization

/// When a queue's run loop looks again: at once (an item arrived, a restoration, a delivery
/// ended), after a delay (the next retry time, the breaker's cool-down), or at the next expiry.
/// Each wake-up is one value of ``kicks``; several before the loop reads them make one.
final class QueueAlarms: Sendable {
    let kicks = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    private let clock: MonitorClock
    private let state = Mutex(State())

    private struct State {
        /// A wake-up for the next item's retry time or the breaker's cool-down.
        var timer: Task<Void, Never>?
        /// A wake-up for the next expiry; `nil` once it fired.
        var expiryTimer: Task<Void, Never>?
        /// No pending item expires before this (wall-clock seconds); `nil`: none expires.
        var nextExpiry: Double?
    }

    init(clock: MonitorClock) {
        self.clock = clock
    }

    func kick() { kicks.continuation.yield() }

    /// Wakes the loop when the clock's uptime reaches `deadline`, in place of any earlier such
    /// wake-up. A deadline, not a delay: the timer's task may start late on a loaded machine, and
    /// a retry must not be held back by that too.
    func wake(at deadline: Duration) {
        let (clock, continuation) = (self.clock, kicks.continuation)
        state.withLock { state in
            state.timer?.cancel()
            state.timer = Task<Void, Never> {
                guard (try? await clock.sleep(untilUptime: deadline)) != nil else { return }
                continuation.yield()
            }
        }
    }

    /// Cancels the wake-up after a delay (nothing more will be started).
    func cancelWake() {
        state.withLock { $0.timer?.cancel() }
    }

    /// Cancels every wake-up: the queue stopped running.
    func cancelAll() {
        state.withLock { state in
            state.timer?.cancel()
            state.expiryTimer?.cancel()
        }
    }

    // MARK: Expiry

    /// An item expires at `time` (wall-clock seconds): wake then, unless something expires sooner.
    func expiry(at time: Double) {
        let sooner = state.withLock { state in
            guard state.nextExpiry.map({ time < $0 }) ?? true else { return false }
            state.nextExpiry = time
            return true
        }
        if sooner { armExpiryTimer() }
    }

    /// Something may have expired already (at start, or an item in flight past its time): the next
    /// sweep looks.
    func expiryPassed() {
        state.withLock { $0.nextExpiry = -.infinity }
    }

    /// Whether an expiry is due at `now`; when none is, the timer for the next is armed if it is not.
    func isExpiryDue(at now: Double) -> Bool {
        let (due, timerSet) = state.withLock { state in
            (state.nextExpiry.map { $0 <= now } ?? false, state.expiryTimer != nil)
        }
        if !due, !timerSet { armExpiryTimer() }
        return due
    }

    /// A sweep found `next` the next expiry (`nil`: none): wait for it.
    func nextExpiry(_ next: Double?) {
        state.withLock { $0.nextExpiry = next }
        armExpiryTimer()
    }

    private func armExpiryTimer() {
        let (clock, continuation) = (self.clock, kicks.continuation)
        state.withLock { state in
            state.expiryTimer?.cancel()
            state.expiryTimer = nil
            guard let at = state.nextExpiry else { return }
            // At most a minute: a wall clock set back delays an expiry by no more than that.
            let delay = Duration.seconds(min(60, max(0, at - clock.wallTime.secondsSinceEpoch)))
            state.expiryTimer = Task<Void, Never>.after(delay, sleep: { try await clock.sleep(for: $0) }) {
                [weak self] in
                self?.state.withLock { $0.expiryTimer = nil }
                continuation.yield()
            }
        }
    }
}
