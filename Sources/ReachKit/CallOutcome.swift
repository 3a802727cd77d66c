import ReachPOSIX
import ReachSupport

/// What one attempt of a live call came to, as ``RetryPolicy`` decides by it: done, worth another
/// try (perhaps not before the server's `Retry-After`), or never going to work.
///
/// ReachKit imports no HTTP or gRPC library: a program reads its client's answer into an outcome
/// with ``http(status:retryAfter:now:)`` or ``grpc(code:)``, in the `classify` closure it gives
/// ``RetryPolicy/run(breaker:cancellingOnLossOf:clock:classify:_:)``.
public enum CallOutcome: Sendable, Hashable {
    /// The call did what it was for, or the server answered for good: no retry.
    case success
    /// Another attempt may succeed: a timeout, a refused connection, a 503. `after`: the server
    /// asked to be left alone that long (HTTP `Retry-After`), which the next wait honours.
    case retryable(after: Duration?)
    /// Another attempt would fail the same way: a 400, a 404, a request the server refuses.
    case permanent

    /// Whether ``RetryPolicy`` tries again after it.
    public var isRetryable: Bool { if case .retryable = self { true } else { false } }

    /// An HTTP status: 429 and every 5xx are retryable (a 429's or a 503's `Retry-After`, in
    /// seconds or as an HTTP date, honoured), every other 4xx is permanent, and the rest (1xx-3xx)
    /// is success.
    ///
    /// - Parameters:
    ///   - status: The response's status code.
    ///   - retryAfter: The response's `Retry-After` header, if any.
    ///   - now: The time an HTTP date is read against (the system's wall clock by default).
    public static func http(
        status: Int,
        retryAfter: String? = nil,
        now: WallTime = MonitorClock.system().wallTime
    ) -> CallOutcome {
        switch status {
        case 429, 500...599:
            let after = [429, 503].contains(status) ? retryAfter.flatMap { RetryAfter.delay($0, now: now) } : nil
            return .retryable(after: after)
        case 400...499: return .permanent
        default: return .success
        }
    }

    /// A gRPC status code (`RPCError.Code.rawValue` or `Status.Code.rawValue` in grpc-swift 2):
    /// `UNAVAILABLE` (14), `DEADLINE_EXCEEDED` (4) and `RESOURCE_EXHAUSTED` (8) are retryable,
    /// `OK` (0) is success, and every other code is permanent.
    public static func grpc(code: Int) -> CallOutcome {
        switch code {
        case 0: .success
        case 4, 8, 14: .retryable(after: nil)
        default: .permanent
        }
    }

    /// What a call that returned, or threw `error`, came to when the program says nothing more:
    /// a value is success; cancellation is permanent (the caller gave up); any other error is
    /// retryable (a connection refused or reset, a timeout: what retries are for).
    public static func `default`<Value>(_ result: Result<Value, any Error>) -> CallOutcome {
        switch result {
        case .success: .success
        case .failure(let error): error is CancellationError ? .permanent : .retryable(after: nil)
        }
    }
}
