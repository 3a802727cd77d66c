import ReachCore
import ReachSupport
import ReachTesting
import Testing

@Suite("Monitor updates: news that is not an event")
struct MonitorUpdatesTests {
    @Test func aProbeResultThatChangesNoVerdictStillRings() async throws {
        let harness = MonitorHarness()
        harness.connect()
        let sequence = harness.sequence
        var updates = harness.monitor.updates().makeAsyncIterator()
        #expect(await updates.next() != nil, "the state as it is now, at once")
        harness.clock.advance(by: .milliseconds(1))
        harness.record(.ok("server", ms: 3))
        #expect(await updates.next() != nil, "a new check time")
        #expect(harness.sequence == sequence, "which published no event")
        await harness.stop()
        #expect(await updates.next() == nil, "ends with the monitor")
    }
}
