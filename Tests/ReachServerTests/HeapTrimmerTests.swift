import ReachTesting
import Synchronization
import Testing

@testable import ReachServer

/// When reachd gives departed event-stream clients' heap back: once a crowd has gone, so that the
/// fault matrix can read reachd's resident size after that trim (`reachd_heap_trims_total`).
@Suite("Heap trimmer")
struct HeapTrimmerTests {
    /// A crowd leaving over several delays is one trim, made a delay after the last departure (the
    /// trim used to follow the first departure, while most of a slow crowd was still there).
    @Test func aCrowdThatLeavesSlowlyIsTrimmedOnceAfterTheLastHasGone() async throws {
        let delay = Duration.milliseconds(300)
        let trims = Mutex<[ContinuousClock.Instant]>([])
        let trimmer = HeapTrimmer(delay: delay) { trims.withLock { $0.append(.now) } }
        // Each departure happened within (before, after): the trimmer takes its own time in between.
        var departures: [(before: ContinuousClock.Instant, after: ContinuousClock.Instant)] = []
        for _ in 0..<40 {
            let before = ContinuousClock.now
            trimmer.clientLeft()
            departures.append((before, .now))
            try await Task.sleep(for: .milliseconds(20))  // the pace of a crowd leaving: 800 ms in all
        }
        let last = try #require(departures.last)
        // The trim runs on the cooperative pool, which a parallel run can hold for seconds.
        try await waitUntil("a trim a delay after the last departure", timeout: .seconds(60)) {
            trims.withLock { $0.contains { $0 >= last.before + delay } }
        }
        // A pause of the delay between two departures (the test stalled on a loaded machine) may
        // end a wave early: count every pause that may have been that long.
        let pauses = zip(departures.dropFirst(), departures).filter { $0.after - $1.before >= delay }.count
        let count = trims.withLock { $0.count }
        #expect(count <= 1 + pauses, "\(count) trims for at most \(pauses + 1) waves of departures")
    }
}
