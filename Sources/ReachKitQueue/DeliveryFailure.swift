/// What a handler throws to say how its failure should be treated. Any other error counts as
/// ``retryable(_:)``: a queue that cannot tell errs on the side of delivering.
public struct DeliveryFailure: Error, CustomStringConvertible, Sendable {
    /// Whether trying again later may succeed (a timeout, a 503) or never will (a 400, a payload the server rejects).
    public let isRetryable: Bool
    /// In words, for the logs and the dead letter's `lastError`.
    public let reason: String

    /// Try again after the backoff; counts toward the circuit breaker and the item's attempts.
    public static func retryable(_ reason: String) -> DeliveryFailure {
        DeliveryFailure(isRetryable: true, reason: reason)
    }

    /// Do not try again: the item goes to the dead letters at once (reason `rejected`).
    public static func permanent(_ reason: String) -> DeliveryFailure {
        DeliveryFailure(isRetryable: false, reason: reason)
    }

    public var description: String { "\(isRetryable ? "retryable" : "permanent") failure: \(reason)" }
}
