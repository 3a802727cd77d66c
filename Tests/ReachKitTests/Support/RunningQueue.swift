import ReachKit
import ReachKitQueue
import ReachKitTesting
import ReachTesting

/// A durable queue on a fresh file, running and following a ``TestConnectivityService`` that the
/// test drives: what the queue tests share. ``stop()`` ends both and closes the file.
final class RunningQueue<Item: Codable & Sendable>: Sendable {
    let queue: DurableQueue<Item>
    let service: TestConnectivityService
    private let store: QueueStore
    private let directory: TemporaryDirectory
    private let tasks: [Task<Void, Never>]

    /// - Parameters:
    ///   - state: What the service says at first.
    ///   - clock: Schedules the queue's retries, cool-downs and expiries (the real clock when `nil`).
    init(
        _ label: String,
        _ state: ConnectivityState = .connected,
        clock: TestClock? = nil,
        policy: QueuePolicy = QueuePolicy(),
        handler: @escaping DurableQueue<Item>.Handler
    ) async throws {
        directory = try TemporaryDirectory(label)
        store = try await openStore("\(directory)/queue.sqlite")
        if let clock {
            service = TestConnectivityService(state, clock: clock.monitorClock)
            queue = DurableQueue(
                name: "uploads",
                store: store,
                service: service,
                policy: policy,
                clock: clock.monitorClock,
                logger: .quiet,
                handler: handler
            )
        } else {
            service = TestConnectivityService(state)
            queue = DurableQueue(
                name: "uploads",
                store: store,
                service: service,
                policy: policy,
                logger: .quiet,
                handler: handler
            )
        }
        let (service, queue) = (self.service, self.queue)
        tasks = [Task { try? await service.run() }, Task { await queue.run() }]
    }

    func stop() async {
        for task in tasks.reversed() {
            task.cancel()
            await task.value
        }
        await closeStore(store)
    }
}
