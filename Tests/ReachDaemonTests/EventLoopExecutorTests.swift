import NIOCore
import NIOPosix
import ReachDaemon
import Testing

/// reachd's default executor (``EventLoopExecutor``), tried through a task's executor preference,
/// which routes a task's jobs and sleeps the same way as the process-wide default does. Each test
/// has loops of its own, which no other test keeps busy.
@Suite("Tasks on the event loops")
struct EventLoopExecutorTests {
    private func withLoops<T: Sendable>(
        _ body: (MultiThreadedEventLoopGroup, EventLoopExecutor) async throws -> T
    ) async throws -> T {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let result: Result<T, any Error>
        do { result = .success(try await body(group, EventLoopExecutor(group: group))) } catch {
            result = .failure(error)
        }
        try await group.shutdownGracefully()
        return try result.get()
    }

    private static func onALoop(of group: MultiThreadedEventLoopGroup) -> Bool {
        group.makeIterator().contains { $0.inEventLoop }
    }

    @Test func aTaskRunsOnOneOfTheLoops() async throws {
        let ranOnLoop = try await withLoops { group, executor in
            await Task(executorPreference: executor) { Self.onALoop(of: group) }.value
        }
        #expect(ranOnLoop)
    }

    @Test func aSleepLastsAtLeastItsDelayAndEndsOnALoop() async throws {
        let clock = ContinuousClock()
        let (slept, endedOnLoop) = try await withLoops { group, executor in
            try await Task(executorPreference: executor) {
                let start = clock.now
                try await Task.sleep(for: .milliseconds(50))
                return (start.duration(to: clock.now), Self.onALoop(of: group))
            }.value
        }
        #expect(slept >= .milliseconds(50))
        #expect(endedOnLoop)
    }

    @Test func cancellingAnHourLongSleepEndsItNow() async throws {
        try await withLoops { _, executor in
            let sleeper = Task(executorPreference: executor) {
                try await Task.sleep(for: .seconds(3600))
            }
            sleeper.cancel()
            await #expect(throws: CancellationError.self) { try await sleeper.value }
        }
    }
}
