import ReachNotifications
import ReachTesting
import Synchronization

/// A notifier running in a task, with every event it reported.
final class RunningNotifier: Sendable {
    let logs = CapturedLogs()
    let notifier: DesktopNotifier
    /// A class, so the running task can share the (non-copyable) mutex.
    private final class Record: Sendable {
        let events = Mutex<[DesktopNotifier.Event]>([])
    }

    private let record = Record()
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(busAddress: String) {
        notifier = DesktopNotifier(logger: logs.logger, busAddress: busAddress)
        let notifier = self.notifier
        let running = Task { [record] in
            await notifier.run { event in record.events.withLock { $0.append(event) } }
        }
        task.withLock { $0 = running }
    }

    var reported: [DesktopNotifier.Event] { record.events.withLock { $0 } }

    func waitFor(_ event: DesktopNotifier.Event, count: Int = 1) async throws {
        try await waitUntil("\(event) ×\(count), got \(reported)") { reported.count { $0 == event } >= count }
    }

    func cancel() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
    }
}
