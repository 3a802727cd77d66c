/// Waits out a duration: `Task.sleep` in production, a test clock's sleep in tests. Throws when the
/// waiting task is cancelled.
package typealias DeadlineSleep = @Sendable (Duration) async throws -> Void

/// `operation` did not finish within its time limit.
package struct DeadlineExceeded: Error, Sendable, Hashable, CustomStringConvertible {
    /// The limit that passed.
    package let limit: Duration

    package var description: String { "no answer within \(limit)" }
}

/// How a wait against a deadline ended.
package enum DeadlineOutcome<Value: Sendable>: Sendable {
    /// The awaited work finished in time, with this value.
    case finished(Value)
    /// The limit passed first.
    case expired
    /// The waiting task was cancelled first.
    case cancelled
}

extension Task where Success == Void, Failure == Never {
    /// A task that runs `body` once `delay` has passed, unless it is cancelled first: the timer of
    /// every race against a deadline, and of event loops that wake themselves.
    @discardableResult
    package static func after(
        _ delay: Duration,
        sleep: @escaping DeadlineSleep = { try await Task<Never, Never>.sleep(for: $0) },
        _ body: @escaping @Sendable () -> Void
    ) -> Task<Void, Never> {
        Task {
            guard (try? await sleep(delay)) != nil else { return }
            body()
        }
    }
}

extension Task where Failure == Never {
    /// This task's value, if it comes within `limit` (`nil`: no limit) and before the waiting task
    /// is cancelled: the one race against a deadline.
    ///
    /// The work runs in a task of its own and is never cancelled here, so the caller decides what
    /// becomes of work that outlives its deadline: cancel it and wait (``withDeadline(_:sleep:_:)``),
    /// abandon it to wind down in the background (a gRPC connect NIO cannot cancel), report it and
    /// keep waiting (a reaction's body), or kill what it waits for (a hook's process group). A
    /// child task could not do all of that: one that ignores cancellation holds its parent.
    package func value(
        within limit: Duration?,
        sleep: @escaping DeadlineSleep = { try await Task<Never, Never>.sleep(for: $0) }
    )
        async -> DeadlineOutcome<Success>
    {
        let (outcomes, settle) = AsyncStream.makeStream(
            of: DeadlineOutcome<Success>.self,
            bufferingPolicy: .bufferingOldest(1)
        )
        let waiter = Task<Void, Never> { settle.yield(.finished(await self.value)) }
        let timer = limit.map { limit in Task<Void, Never>.after(limit, sleep: sleep) { settle.yield(.expired) } }
        defer {
            waiter.cancel()
            timer?.cancel()
            settle.finish()
        }
        // The loop ends without a value (`next()` gives nil) when the waiting task is cancelled.
        for await outcome in outcomes { return outcome }
        return .cancelled
    }
}

/// Runs `operation` against a deadline: its result when it finishes within `limit`; otherwise it is
/// cancelled and, once it has ended, ``DeadlineExceeded`` is thrown.
///
/// The bounded wait of a request: a client's call, a webhook's POST. It behaves as a child task
/// would: cancelling the caller cancels `operation`, and the call returns only when `operation`
/// has, so `operation` must end when cancelled.
///
/// - Parameters:
///   - limit: How long `operation` may take.
///   - sleep: Waits out the limit: `Task.sleep` by default, a test clock's in tests.
/// - Throws: What `operation` throws, ``DeadlineExceeded``, or `CancellationError` when the calling
///   task was cancelled first.
package func withDeadline<Value: Sendable>(
    _ limit: Duration,
    sleep: @escaping DeadlineSleep = { try await Task.sleep(for: $0) },
    _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let work = Task<Result<Value, any Error>, Never> {
        do {
            return .success(try await operation())
        } catch {
            return .failure(error)
        }
    }
    let outcome = await withTaskCancellationHandler {
        await work.value(within: limit, sleep: sleep)
    } onCancel: {
        work.cancel()
    }
    switch outcome {
    case .finished(let result):
        return try result.get()
    case .expired:
        work.cancel()
        _ = await work.value
        throw DeadlineExceeded(limit: limit)
    case .cancelled:
        _ = await work.value
        throw CancellationError()
    }
}
