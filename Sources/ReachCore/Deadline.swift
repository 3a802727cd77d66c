/// `operation` did not finish within its time limit.
public struct DeadlineExceeded: Error, Sendable, Hashable, CustomStringConvertible {
    /// The limit that passed.
    public let limit: Duration

    public var description: String { "no answer within \(limit)" }
}

/// Runs `operation` against a deadline: its result when it finishes within `limit`; otherwise it is
/// cancelled and ``DeadlineExceeded`` is thrown.
///
/// The one race against a deadline that every bounded wait shares (a probe's, a hook's, a
/// webhook's, a client's). `operation` runs as a child task, so it must end when cancelled: a child
/// that ignores cancellation holds this call past the deadline.
///
/// - Parameters:
///   - limit: How long `operation` may take.
///   - sleep: Waits out the limit: `Task.sleep` by default, a test clock's in tests.
public func withDeadline<Value: Sendable>(
    _ limit: Duration, sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
    _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await sleep(limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let value = try await group.next() ?? nil else { throw DeadlineExceeded(limit: limit) }
        return value
    }
}
