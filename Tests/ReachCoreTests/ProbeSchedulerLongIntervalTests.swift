import ReachTesting
import Testing

@testable import ReachCore

/// A long interval (a family check ticks every tenth interval: 10 s) keeps its promise: two probes
/// of a target are never more than the interval and half a second apart, however immediate
/// probes and new plans fall on its grid.
@Suite("Probe scheduler: long intervals")
struct ProbeSchedulerLongIntervalTests {
    static func everyTenSeconds(_ name: String) -> ProbeTarget {
        var target = ProbeTarget.http(name)
        target.interval = .seconds(10)
        return target
    }

    @Test func anImmediateProbeSecondsBeforeATickLeavesTheTickInPlace() async throws {
        let harness = SchedulerHarness(targets: [Self.everyTenSeconds("family")])
        try await harness.waitForCalls(1)
        try await harness.advance(by: .seconds(6), step: .milliseconds(100))
        // A route change asks for an immediate probe 4 s before the tick at 10 s.
        harness.monitor.requestImmediateProbe()
        try await harness.advance(by: .seconds(15), step: .milliseconds(100))
        #expect(
            harness.prober.callTimes == [.zero, .seconds(6), .seconds(10), .seconds(20)],
            "the tick at 10 s is no repeat of the probe at 6 s"
        )
        await harness.stop()
    }

    @Test func aNewPlanLeavesNoTargetLongerThanItsIntervalUnprobed() async throws {
        // Three variants, phases 0, 3.3 and 6.7 s: each probed at once on start, then on its grid.
        let names = ["a", "b", "c"]
        let harness = SchedulerHarness(targets: names.map(Self.everyTenSeconds))
        try await harness.advance(by: .seconds(25), step: .milliseconds(100))
        for name in names {
            let times = harness.prober.calls(of: name)
            let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
            #expect(!gaps.isEmpty && gaps.allSatisfy { $0 <= .milliseconds(10_500) }, "\(name) probed at \(times)")
        }
        await harness.stop()
    }

    @Test func theRepeatWindowIsHalfTheIntervalAtMostHalfASecond() {
        #expect(ProbeSchedule.repeatWindow(interval: .seconds(1)) == .milliseconds(500))
        #expect(ProbeSchedule.repeatWindow(interval: .milliseconds(200)) == .milliseconds(100))
        #expect(ProbeSchedule.repeatWindow(interval: .seconds(10)) == .milliseconds(500))
    }
}
