import ReachSupport
import ReachTesting
import Testing

@testable import ReachCore

/// A probe round's first findings are one event: at start (and after a reload, a regained link or
/// a wake) every target leaves `unknown` within milliseconds, and one event per target would be more
/// than a subscriber may fall behind, skipping a client that reads as fast as it can.
@Suite("The first round is one event")
struct FirstRoundTests {
    static let targets: [ProbeTarget] = (0..<100).map { .http("t\($0)") }

    @Test func aFirstFindingIsNewsOnlyWithTheRestOfItsRound() {
        var driver = CombinerDriver(Self.targets, policy: .any)
        driver.links(.of(.usable()))
        driver.result(.refused("t0"))
        #expect(!driver.lastChange.isNews, "t0 failed, but 99 targets are still unknown and the verdict did not move")
        for index in 1..<99 {
            driver.result(.refused("t\(index)"))
            #expect(!driver.lastChange.isNews)
        }
        driver.result(.refused("t99"))
        #expect(driver.lastChange.isNews, "the last first finding completes the round")
        #expect(
            driver.verdict.targets.allSatisfy { $0.health == .unhealthy },
            "the round's event carries every finding"
        )
        driver.result(.ok("t5"))
        #expect(driver.lastChange.isNews, "after the round, each change is news of its own")
    }

    @Test func aHeadlineChangeIsNewsAtOnceEvenMidRound() {
        var driver = CombinerDriver(Self.targets, policy: .any)
        driver.links(.of(.usable()))
        driver.result(.ok("t0"))
        #expect(driver.state == .connected)
        #expect(driver.lastChange.isNews, "the verdict moved: published at once")
    }

    @Test func aSubscriberFromTheStartSeesEveryEventOfTheFirstRound() async throws {
        let harness = MonitorHarness(targets: Self.targets)
        let subscription = harness.monitor.subscribe()
        var events = subscription.makeAsyncIterator()
        let first = try #require(await events.next())
        harness.monitor.update(links: .of(.usable()))
        // The whole first round arrives before the subscriber reads anything.
        harness.record(.refused("t0"))
        for target in Self.targets.dropFirst() { harness.record(.ok(target.name)) }
        var received = [first]
        while received.count < 4, let event = await events.next() { received.append(event) }
        let sequences = received.map(\.sequence)
        #expect(sequences == Array(first.sequence...(first.sequence + 3)), "no gap: \(sequences)")
        #expect(
            received.map(\.verdict.reason) == [
                .starting, .awaitingProbe, .targetFailed(target: "t0", reason: .connectionRefused),
                .targetFailed(target: "t0", reason: .connectionRefused),
            ]
        )
        #expect(
            received.last?.verdict.targets.allSatisfy { $0.health != .unknown } == true,
            "the round's event carries every first finding"
        )
        #expect(harness.monitor.current.sequence == sequences.last, "and nothing more was published")
        await harness.stop()
    }
}
