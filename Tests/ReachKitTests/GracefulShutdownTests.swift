import Foundation
import ReachKit
import ReachKitEmbedded
import ReachKitQueue
import ReachKitTesting
import ReachTestRigs
import ReachTesting
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// Every ReachKit service is a swift-service-lifecycle `Service` that ends on graceful shutdown,
/// not only on cancellation; the queue finishes what it has under way first.
@Suite("Graceful shutdown")
struct GracefulShutdownTests {
    struct Upload: Codable, Sendable {
        var number: Int
    }

    @Test func theQueueLetsTheDeliveryUnderWayEndStartsNoMoreAndKeepsTheRest() async throws {
        let directory = try TemporaryDirectory("graceful")
        let store = try await openStore("\(directory)/queue.sqlite")
        let held = Gate()
        let started = Collected<Int>()
        let queue = DurableQueue<Upload>(
            name: "uploads",
            store: store,
            service: TestConnectivityService(.connected),
            logger: .quiet
        ) { delivery in
            started.append(delivery.item.number)
            await held.wait()
        }
        try await queue.enqueue(contentsOf: (0..<3).map { (key: "k\($0)", item: Upload(number: $0)) })
        let ended = Collected<Void>()
        try await testGracefulShutdown { trigger in
            let running = Task {
                await queue.run()
                ended.append(())
            }
            try await waitUntil("the first delivery under way") { started.count == 1 }
            trigger.triggerGracefulShutdown()
            // Not synchronisation: the queue's stop has run (the trigger calls it), and a right queue
            // does nothing more until the delivery ends, so no later event can show that run() did
            // not return; this is the time a wrong one is given to return.
            try await Task.sleep(for: .milliseconds(300))
            #expect(ended.count == 0, "the delivery under way is waited for")
            held.open()
            await running.value
        }
        #expect(started.all == [0], "nothing more started after the shutdown began")
        let stats = try await queue.stats()
        #expect(
            stats.pending == 2 && stats.inFlight == 0 && stats.dead == 0,
            "the delivery was recorded; the rest waits in the file: \(stats)"
        )
        await closeStore(store)
    }

    @Test func theReachdBackedServiceStopsAndEndsItsStreams() async throws {
        // Nothing listens there: the service keeps trying to reach reachd until it is stopped.
        let service = ReachdService(
            endpoint: ReachdEndpoint(base: "http://127.0.0.1:\(try freeLoopbackPort())"),
            logger: .quiet
        )
        try await expectGracefulStop(of: service)
    }

    @Test func theEmbeddedServiceStopsAndEndsItsStreams() async throws {
        try await expectGracefulStop(of: EmbeddedService(logger: .quiet))
    }

    @Test func theTestServiceStopsAndEndsItsStreams() async throws {
        try await expectGracefulStop(of: TestConnectivityService(.connected))
    }

    /// Runs `service`, triggers graceful shutdown, and expects `run()` to return and a verdict stream to end.
    private func expectGracefulStop(of service: some ConnectivityService) async throws {
        try await testGracefulShutdown { trigger in
            let running = Task { try await service.run() }
            let received = Collected<Void>()
            let verdicts = Task {
                for await _ in service.verdicts() { received.append(()) }
                return received.count
            }
            // The stream is open: it gave the current verdict.
            try await waitUntil("the current verdict on the stream") { received.count >= 1 }
            trigger.triggerGracefulShutdown()
            try await running.value
            #expect(await verdicts.value >= 1, "the stream gave the current verdict, then ended")
        }
    }

    /// In a program's service group: the queue, listed after the service, stops first (its
    /// delivery under way ends while the service still runs), then the service.
    @Test func aServiceGroupStopsTheQueueThenTheService() async throws {
        let directory = try TemporaryDirectory("group")
        let store = try await openStore("\(directory)/queue.sqlite")
        let service = TestConnectivityService(.connected)
        let held = Gate()
        // Its verdict streams end when the service stops.
        let serviceStopped = Collected<Void>()
        let watching = Task {
            for await _ in service.verdicts() {}
            serviceStopped.append(())
        }
        let serviceRanThrough = Collected<Bool>()
        // The delivery runs in the queue's task tree: a handler registered here runs right after
        // the queue's own (registered when its run began), so its call shows the queue stopping.
        let queueStopping = Gate()
        let queue = DurableQueue<Upload>(name: "uploads", store: store, service: service, logger: .quiet) { _ in
            await withGracefulShutdownHandler {
                await held.wait()
            } onGracefulShutdown: {
                queueStopping.open()
            }
            serviceRanThrough.append(serviceStopped.count == 0)
        }
        try await queue.enqueue(contentsOf: (0..<2).map { (key: "k\($0)", item: Upload(number: $0)) })
        let group = ServiceGroup(services: [service, queue], logger: .quiet)
        let running = Task { try await group.run() }
        try await waitUntil("a delivery under way") { held.arrivals == 1 }
        await group.triggerGracefulShutdown()
        await queueStopping.wait()
        held.open()
        try await running.value
        await watching.value
        #expect(serviceRanThrough.all == [true], "the service still ran while the queue finished its delivery")
        #expect(try await queue.stats().pending == 1)
        await closeStore(store)
    }
}
