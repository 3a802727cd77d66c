import ReachSupport
import ReachTesting
import Synchronization
import Testing

@Suite("Deadlines: the one race")
struct DeadlineTests {
    @Test func aTaskThatFinishesInTimeGivesItsValue() async {
        let clock = TestClock()
        let work = Task { 42 }
        guard case .finished(let value) = await work.value(within: .seconds(1), sleep: clock.monitorClock.sleep(for:))
        else {
            Issue.record("expected the value")
            return
        }
        #expect(value == 42)
    }

    @Test func theDeadlineComesFirstAndTheWorkGoesOn() async throws {
        let clock = TestClock()
        let gate = Gate()
        let work = Task {
            await gate.wait()
            return "late"
        }
        let waiting = Task { await work.value(within: .seconds(5), sleep: clock.monitorClock.sleep(for:)) }
        try await clock.waitForSleepers()
        clock.advance(by: .seconds(5))
        guard case .expired = await waiting.value else {
            Issue.record("expected the deadline")
            return
        }
        #expect(!work.isCancelled, "the caller decides what becomes of the work")
        // The reaction's way: reported at the deadline, then waited for without a limit.
        let after = Task { await work.value(within: nil) }
        gate.open()
        guard case .finished("late") = await after.value else {
            Issue.record("expected the late value")
            return
        }
    }

    @Test func cancellingTheWaiterEndsTheWaitButNotTheWork() async throws {
        let gate = Gate()
        let work = Task { await gate.wait() }
        let waiting = Task { await work.value(within: nil) }
        waiting.cancel()
        guard case .cancelled = await waiting.value else {
            Issue.record("expected cancelled")
            return
        }
        #expect(!work.isCancelled)
        gate.open()
        await work.value
    }

    @Test func withDeadlineGivesTheValueInTime() async throws {
        #expect(try await withDeadline(.seconds(10)) { 7 } == 7)
    }

    @Test func withDeadlineCancelsTheOperationWaitsForItAndThrows() async throws {
        let clock = TestClock()
        let ended = Mutex(false)
        let running = Task {
            try await withDeadline(.seconds(2), sleep: clock.monitorClock.sleep(for:)) {
                // Ends only when cancelled, like a request at its deadline (a deliberate hang).
                try? await Task.sleep(for: .seconds(3600))
                ended.withLock { $0 = true }
                return 1
            }
        }
        try await clock.waitForSleepers()
        clock.advance(by: .seconds(2))
        await #expect(throws: DeadlineExceeded.self) { try await running.value }
        #expect(ended.withLock { $0 }, "it returns only once the operation has")
    }

    @Test func withDeadlineRethrowsTheOperationsError() async {
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await withDeadline(.seconds(10)) { throw Refused() } }
    }

    @Test func cancellingTheCallerCancelsTheOperation() async throws {
        let started = Gate()
        let running = Task {
            try await withDeadline(.seconds(3600)) {
                started.open()
                try await Task.sleep(for: .seconds(3600))  // a deliberate hang, ended by cancellation
            }
        }
        await started.wait()
        running.cancel()
        await #expect(throws: CancellationError.self) { try await running.value }
    }

    @Test func anAlarmRingsOnceAndNotAfterCancellation() async throws {
        let clock = TestClock()
        let rings = Mutex(0)
        _ = Task.after(.seconds(1), sleep: clock.monitorClock.sleep(for:)) { rings.withLock { $0 += 1 } }
        let silenced = Task.after(.seconds(1), sleep: clock.monitorClock.sleep(for:)) { rings.withLock { $0 += 100 } }
        try await clock.waitForSleepers(2)
        silenced.cancel()
        clock.advance(by: .seconds(1))
        try await waitUntil("the alarm") { rings.withLock { $0 } == 1 }
        await silenced.value
        #expect(rings.withLock { $0 } == 1)
    }
}
