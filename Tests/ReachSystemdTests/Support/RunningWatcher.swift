import Foundation
import ReachSystemd
import ReachTesting
import Synchronization

/// A ``LogindSleepWatcher`` running in a task, with what it reported and when it returned.
final class RunningWatcher: Sendable {
    let logs = CapturedLogs()
    /// A class, so the running task can share the (non-copyable) mutex and atomic.
    private final class Record: Sendable {
        let changes = Mutex<[Bool]>([])
        let returned = Atomic<Bool>(false)
    }

    private let record = Record()
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts watching the bus at `address`; `onChange` also receives every change.
    init(address: String?, onChange: @escaping @Sendable (Bool) -> Void = { _ in }) {
        let watcher = LogindSleepWatcher(logger: logs.logger, busAddress: address)
        let running = Task { [record] in
            await watcher.run { sleeping in
                record.changes.withLock { $0.append(sleeping) }
                onChange(sleeping)
            }
            record.returned.store(true, ordering: .releasing)
        }
        task.withLock { $0 = running }
    }

    struct ReturnedEarly: Error, CustomStringConvertible {
        var logs: [CapturedLogs.Entry]
        var description: String { "run returned before subscribing; it logged \(logs)" }
    }

    var reported: [Bool] { record.changes.withLock { $0 } }
    var hasReturned: Bool { record.returned.load(ordering: .acquiring) }

    /// Waits until the AddMatch is in place on the bus (the watcher's debug note), so signals
    /// sent from now on reach it.
    func waitUntilSubscribed(timeout: Duration = .seconds(10)) async throws {
        try await waitUntil("the watcher subscribed to PrepareForSleep", timeout: timeout) {
            logs.contains("watching logind's PrepareForSleep") || hasReturned
        }
        if hasReturned { throw ReturnedEarly(logs: logs.all) }
    }

    func waitForReports(_ count: Int, timeout: Duration = .seconds(10)) async throws {
        try await waitUntil("\(count) report(s), got \(reported)", timeout: timeout) { reported.count >= count }
    }

    /// Waits until `run` returns by itself; returns how long that took.
    @discardableResult
    func waitForReturn(timeout: Duration = .seconds(10)) async throws -> Duration {
        let started = ContinuousClock.now
        try await waitUntil("run to return", timeout: timeout) { hasReturned }
        return ContinuousClock.now - started
    }

    /// Cancels `run` and returns how long it took to return.
    @discardableResult
    func cancel() async -> Duration {
        guard let running = task.withLock({ $0 }) else { return .zero }
        let started = ContinuousClock.now
        running.cancel()
        await running.value
        return ContinuousClock.now - started
    }

    deinit {
        task.withLock { $0 }?.cancel()
    }
}
