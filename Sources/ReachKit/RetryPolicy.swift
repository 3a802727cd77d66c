import ReachPOSIX
import ReachSupport

/// How a live call — one a program makes outside the queue, and waits for — is retried: how many
/// attempts, how long to wait between them, and how long all of it may take.
///
/// ``run(breaker:cancellingOnLossOf:clock:classify:_:)`` makes the call under the policy. It works
/// with any client through a closure: AsyncHTTPClient, grpc-swift 2, a database driver
/// (docs/reachkit.md shows the first two).
///
/// ```swift
/// let response = try await RetryPolicy(deadline: .seconds(30)).run(
///     breaker: serverBreaker, cancellingOnLossOf: service,
///     classify: { result in
///         guard case .success(let response) = result else { return .default(result) }
///         return .http(status: Int(response.status.code), retryAfter: response.headers.first(name: "retry-after"))
///     }
/// ) { _ in
///     try await http.execute(request, timeout: .seconds(10))
/// }
/// ```
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// The wait before each retry, by the failures so far (with jitter unless turned off). A
    /// server's `Retry-After` lengthens the wait it applies to; it never shortens it.
    public var backoff: ReconnectBackoff
    /// How long all attempts and the waits between them may take together (`nil`: no limit). An
    /// attempt under way then is cancelled and ``CallInterrupted/deadlineExceeded(_:)`` thrown; a
    /// wait that would end after it is not begun, and the last attempt's answer stands.
    public var deadline: Duration?

    /// The defaults: 3 attempts, 250 ms doubling to 10 s between them (with jitter), 30 s in all.
    public init(
        maxAttempts: Int = 3,
        backoff: ReconnectBackoff = ReconnectBackoff(first: .milliseconds(250), longest: .seconds(10), jitter: true),
        deadline: Duration? = .seconds(30)
    ) {
        precondition(
            maxAttempts >= 1 && (deadline ?? .seconds(1)) > .zero,
            "a retry policy needs an attempt and time for it"
        )
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        self.deadline = deadline
    }

    /// Calls `operation` (given the attempt's number, from 1) until `classify` says its result is
    /// not ``CallOutcome/retryable(after:)``, the attempts are spent or the deadline is near; then
    /// returns the last value, or throws the last error.
    ///
    /// - Parameters:
    ///   - breaker: Asked before every attempt (an open breaker ends the call with
    ///     ``CallInterrupted/breakerOpen``) and told every outcome.
    ///   - service: When given, a loss of connectivity (a `disconnected` verdict) while the call is
    ///     under way or waiting cancels it with ``CallInterrupted/connectivityLost``; a call begun
    ///     while disconnected fails so at once.
    ///   - clock: Times the waits and the deadline.
    ///   - classify: What a result came to: an HTTP status through ``CallOutcome/http(status:retryAfter:now:)``,
    ///     a gRPC code through ``CallOutcome/grpc(code:)``; ``CallOutcome/default(_:)`` when not given.
    ///   - operation: One attempt, given its number (1 for the first).
    /// - Throws: The last attempt's error, or ``CallInterrupted``.
    public func run<Value: Sendable>(
        breaker: CircuitBreaker? = nil,
        cancellingOnLossOf service: (any ConnectivityService)? = nil,
        clock: MonitorClock = .system(),
        classify: @escaping @Sendable (Result<Value, any Error>) -> CallOutcome = CallOutcome.default,
        _ operation: @escaping @Sendable (_ attempt: Int) async throws -> Value
    ) async throws -> Value {
        let started = clock.uptime
        let remaining = { deadline.map { $0 - (clock.uptime - started) } }
        var attempt = 0
        while true {
            attempt += 1
            if let breaker, !breaker.admit() { throw CallInterrupted.breakerOpen }
            let result = try await Self.attempt(
                attempt,
                within: remaining(),
                clock: clock,
                breaker: breaker,
                lossOf: service,
                operation
            )
            let outcome = classify(result)
            breaker?.record(outcome)
            guard case .retryable(let after) = outcome, attempt < maxAttempts else { return try result.get() }
            let wait = max(backoff.delay(afterFailures: attempt), after ?? .zero)
            if let left = remaining(), wait >= left { return try result.get() }
            try await Self.interruptible(lossOf: service) { try await clock.sleep(for: wait) }
        }
    }

    /// One attempt against what is left of the deadline, cut by a loss when asked.
    private static func attempt<Value: Sendable>(
        _ number: Int,
        within limit: Duration?,
        clock: MonitorClock,
        breaker: CircuitBreaker?,
        lossOf service: (any ConnectivityService)?,
        _ operation: @escaping @Sendable (Int) async throws -> Value
    ) async throws -> Result<Value, any Error> {
        do {
            return try await interruptible(lossOf: service) {
                guard let limit else { return await result { try await operation(number) } }
                guard limit > .zero else { throw CallInterrupted.deadlineExceeded(.zero) }
                do {
                    return try await withDeadline(limit, sleep: { try await clock.sleep(for: $0) }) {
                        await result { try await operation(number) }
                    }
                } catch is DeadlineExceeded {
                    throw CallInterrupted.deadlineExceeded(limit)
                }
            }
        } catch let interrupted as CallInterrupted {
            // A call that timed out counts as the server's failure; one cut by a loss does not.
            if interrupted == .connectivityLost { breaker?.abandon() } else { breaker?.record(.retryable(after: nil)) }
            throw interrupted
        }
    }

    /// What `body` returned or threw.
    private static func result<Value>(_ body: () async throws -> Value) async -> Result<Value, any Error> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    /// Runs `body`, cancelled with ``CallInterrupted/connectivityLost`` when `service` says
    /// `disconnected` first (at once if it already does).
    private static func interruptible<T: Sendable>(
        lossOf service: (any ConnectivityService)?,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard let service else { return try await body() }
        let verdicts = service.verdicts()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                for await verdict in verdicts where verdict.state == .disconnected {
                    throw CallInterrupted.connectivityLost
                }
                return nil
            }
            defer { group.cancelAll() }
            while let value = try await group.next() {
                if let value { return value }
            }
            throw CancellationError()
        }
    }
}

/// Why ``RetryPolicy/run(breaker:cancellingOnLossOf:clock:classify:_:)`` ended a call before it
/// had an answer to give.
public enum CallInterrupted: Error, Sendable, Hashable, CustomStringConvertible {
    /// The policy's deadline passed (with the time that was left for the last attempt).
    case deadlineExceeded(Duration)
    /// Connectivity was lost while the call was under way or waiting to retry.
    case connectivityLost
    /// The circuit breaker is open: the server failed too often lately.
    case breakerOpen

    public var description: String {
        switch self {
        case .deadlineExceeded(let limit): "no answer within the \(limit) left of the call's deadline"
        case .connectivityLost: "connectivity was lost during the call"
        case .breakerOpen: "the circuit breaker is open: the server failed too often lately"
        }
    }
}
