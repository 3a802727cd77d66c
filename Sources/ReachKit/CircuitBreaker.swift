import ReachPOSIX
import ReachSupport
import Synchronization

/// Stops calling a server that keeps failing: after ``threshold`` consecutive retryable failures
/// the breaker opens and refuses every call until ``cooldown`` has passed; then one trial call goes
/// through (half-open), whose success closes it again and whose failure opens it for another
/// cool-down. Share one breaker among the calls to one server.
///
/// ``RetryPolicy/run(breaker:cancellingOnLossOf:clock:classify:_:)`` asks it before each attempt
/// and tells it each outcome; a program may also drive it by hand (``admit()``, ``record(_:)``),
/// and ``reset()`` it when connectivity is restored (the queue does, on every restoration).
public final class CircuitBreaker: Sendable {
    /// Where the breaker stands.
    public enum State: String, Sendable, Hashable {
        /// Calls go through.
        case closed
        /// Calls are refused until the cool-down ends.
        case open
        /// The cool-down ended: one trial call may go through.
        case halfOpen = "half_open"
    }

    private struct Guarded {
        var machine: BreakerMachine
        /// Half-open: the one trial call has been admitted and has not ended.
        var trialUnderWay = false
    }

    /// Consecutive retryable failures that open the breaker.
    public var threshold: Int { guarded.withLock { $0.machine.threshold } }
    /// How long it stays open before a trial call.
    public var cooldown: Duration { guarded.withLock { $0.machine.cooldown } }
    private let guarded: Mutex<Guarded>
    private let clock: MonitorClock

    /// - Parameters:
    ///   - threshold: Consecutive retryable failures that open it (5 by default).
    ///   - cooldown: How long it stays open before letting a trial through (a minute by default).
    ///   - clock: Times the cool-down.
    public init(threshold: Int = 5, cooldown: Duration = .seconds(60), clock: MonitorClock = .system()) {
        guarded = Mutex(Guarded(machine: BreakerMachine(threshold: threshold, cooldown: cooldown)))
        self.clock = clock
    }

    /// Where it stands now (an open breaker whose cool-down has ended says `halfOpen`).
    public var state: State {
        let now = clock.uptime
        return guarded.withLock { guarded in
            switch guarded.machine.position {
            case .closed: .closed
            case .halfOpen: .halfOpen
            case .open(let since): now - since >= guarded.machine.cooldown ? .halfOpen : .open
            }
        }
    }

    /// Whether a call may go now: always while closed, never while open, and one trial at a time
    /// once the cool-down has ended. A call admitted must have its outcome ``record(_:)``ed.
    public func admit() -> Bool {
        let now = clock.uptime
        return guarded.withLock { guarded in
            guard guarded.machine.admit(at: now, limit: 1).allowed > 0 else { return false }
            guard guarded.machine.position == .halfOpen else { return true }
            defer { guarded.trialUnderWay = true }
            return !guarded.trialUnderWay
        }
    }

    /// An admitted call's outcome: a retryable failure counts toward opening the breaker; success
    /// and a permanent failure (the server answered, and said no) close it.
    public func record(_ outcome: CallOutcome) {
        let now = clock.uptime
        guarded.withLock { guarded in
            guarded.trialUnderWay = false
            if outcome.isRetryable { _ = guarded.machine.failed(at: now) } else { guarded.machine.succeeded() }
        }
    }

    /// An admitted call ended without an outcome to tell (connectivity was lost): it counts
    /// neither way, and a trial call may go through again.
    package func abandon() {
        guarded.withLock { $0.trialUnderWay = false }
    }

    /// Closes the breaker: the server deserves a fresh chance (connectivity was restored, a person said so).
    public func reset() {
        guarded.withLock { guarded in
            guarded.trialUnderWay = false
            guarded.machine.reset()
        }
    }
}
