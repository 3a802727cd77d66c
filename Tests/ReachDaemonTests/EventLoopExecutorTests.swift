import NIOCore
import NIOPosix
import ReachDaemon
import Testing

/// reachd's default executor (``EventLoopExecutor``), tried through a task's executor preference,
/// which routes a task's jobs and sleeps the same way as the process-wide default does, over the
/// same shared group.
@Suite("Tasks on the event loops")
struct EventLoopExecutorTests {
    let group = MultiThreadedEventLoopGroup.singleton

    private func onLoops<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await Task(executorPreference: EventLoopExecutor(group: group), operation: body).value
    }

    private func currentLoop() -> (any EventLoop)? {
        group.makeIterator().first { $0.inEventLoop }
    }

    @Test func aTaskRunsOnOneOfTheLoops() async throws {
        let ranOnLoop = try await onLoops { currentLoop() != nil }
        #expect(ranOnLoop)
    }

    @Test func aTaskResumedByALoopStaysOnThatLoop() async throws {
        let loops = Array(group.makeIterator())
        for loop in loops {
            let stayed = try await onLoops {
                try await loop.submit {}.get()
                return loop.inEventLoop
            }
            #expect(stayed)
        }
    }

    @Test func aSleepLastsAtLeastItsDelayAndEndsOnALoop() async throws {
        let clock = ContinuousClock()
        let (slept, ranOnLoop) = try await onLoops {
            let start = clock.now
            try await Task.sleep(for: .milliseconds(50))
            return (start.duration(to: clock.now), currentLoop() != nil)
        }
        #expect(slept >= .milliseconds(50))
        #expect(ranOnLoop)
    }

    @Test func cancellingAnHourLongSleepEndsItNow() async throws {
        let sleeper = Task(executorPreference: EventLoopExecutor(group: group)) {
            try await Task.sleep(for: .seconds(3600))
        }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
