import ReachSupport
import ReachTesting
import Testing

@testable import ReachCore

@Suite("Hub")
struct EventHubTests {
    static let start = WallTime(sinceEpoch: .zero)

    static func verdict(_ state: ConnectivityState, _ n: Int = 0) -> Verdict {
        Verdict(state: state, reason: state == .connected ? .healthy : .noLink, since: start.advanced(by: .seconds(n)))
    }

    @Test func aSubscriberGetsTheCurrentVerdictFirstThenEveryChange() async {
        let hub = EventHub(initial: Self.verdict(.unknown), bufferLimit: 8, historyLimit: 16)
        hub.publish(Self.verdict(.connected, 1))
        let stream = hub.subscribe()
        hub.publish(Self.verdict(.disconnected, 2))
        hub.publish(Self.verdict(.connected, 3))
        hub.finish()
        let events = await Array(stream)
        #expect(events.map(\.sequence) == [2, 3, 4])
        #expect(events.map(\.verdict.state) == [.connected, .disconnected, .connected])
        #expect(events.allSatisfy { !$0.isReset })
    }

    @Test func tenThousandSubscribersSeeTheSameOrderedSequence() async throws {
        let hub = EventHub(initial: Self.verdict(.unknown), bufferLimit: 32, historyLimit: 256)
        let subscribers = 10_000
        let changes = 30
        let streams = (0..<subscribers).map { _ in hub.subscribe() }
        #expect(hub.subscriberCount == subscribers)
        // 10,000 readers (a second of CPU alone, many under load): off the cooperative pool, whose
        // two threads they held so long that every test waiting in real time beside them timed out.
        let sequences = await offPool {
            await withTaskGroup(of: [UInt64].self) { group in
                for stream in streams {
                    group.addTask { await Array(stream).map(\.sequence) }
                }
                for n in 1...changes {
                    hub.publish(Self.verdict(n.isMultiple(of: 2) ? .connected : .disconnected, n))
                    if n.isMultiple(of: 10) { await Task.yield() }
                }
                hub.finish()
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        let expected = Array(UInt64(1)...UInt64(changes + 1))
        #expect(sequences.count == subscribers)
        #expect(sequences.allSatisfy { $0 == expected })
    }

    @Test func aSubscriberThatNeverReadsHoldsOnlyItsBufferAndEndsAtTheLatest() async {
        let bufferLimit = 16
        let hub = EventHub(initial: Self.verdict(.unknown), bufferLimit: bufferLimit, historyLimit: 256)
        let idle = hub.subscribe()
        // 100,000 publications, off the cooperative pool (as above).
        await offPool {
            for n in 1...100_000 {
                hub.publish(Self.verdict(n.isMultiple(of: 2) ? .connected : .disconnected, n))
            }
            hub.finish()
        }
        let held = await Array(idle)
        #expect(held.count == bufferLimit + 1, "the buffer holds its limit plus the initial backlog, no more")
        #expect(held.last?.sequence == 100_001)
        #expect(
            held.map(\.sequence) == Array(UInt64(100_001 - held.count + 1)...100_001),
            "the oldest are dropped, never the newest"
        )
    }

    @Test func cancellingTheConsumerUnsubscribes() async throws {
        let hub = EventHub(initial: Self.verdict(.unknown), bufferLimit: 4, historyLimit: 4)
        let consumer = Task {
            for await _ in hub.subscribe() {}
        }
        try await waitUntil("one subscriber") { hub.subscriberCount == 1 }
        consumer.cancel()
        try await waitUntil("no subscriber") { hub.subscriberCount == 0 }
        hub.publish(Self.verdict(.connected))
        #expect(hub.subscriberCount == 0)
    }

    @Test func anIdFromAnEarlierRunGetsAResetNotSilence() async {
        // The earlier run ended at #3; this one starts its numbering elsewhere, as the daemon does.
        let hub = EventHub(initial: Self.verdict(.unknown), firstSequence: 1_000_000, bufferLimit: 4, historyLimit: 16)
        hub.publish(Self.verdict(.disconnected, 1))
        hub.publish(Self.verdict(.connected, 2))
        let resumed = hub.subscribe(resumingAfter: 3)
        hub.finish()
        let events = await Array(resumed)
        #expect(events.map(\.sequence) == [1_000_002])
        #expect(events.first?.isReset == true)
    }

    @Test func resumingReplaysTheMissedEventsFromTheHistory() async {
        let hub = EventHub(initial: Self.verdict(.unknown), bufferLimit: 2, historyLimit: 256)
        for n in 1...9 { hub.publish(Self.verdict(n.isMultiple(of: 2) ? .connected : .disconnected, n)) }
        let resumed = hub.subscribe(resumingAfter: 5)
        hub.publish(Self.verdict(.connected, 10))
        hub.finish()
        let events = await Array(resumed)
        #expect(events.map(\.sequence) == [6, 7, 8, 9, 10, 11], "the replay is not cut by the live buffer limit")
        #expect(events.allSatisfy { !$0.isReset })
    }

    @Test func aResumedSubscriberThatLagsKeepsTheNewestOfItsReplayAndBuffer() async {
        let hub = EventHub(initial: Self.verdict(.unknown), bufferLimit: 2, historyLimit: 256)
        for n in 1...9 { hub.publish(Self.verdict(n.isMultiple(of: 2) ? .connected : .disconnected, n)) }
        let resumed = hub.subscribe(resumingAfter: 5)  // replays 6...10
        for n in 10...12 { hub.publish(Self.verdict(n.isMultiple(of: 2) ? .connected : .disconnected, n)) }
        hub.finish()
        let events = await Array(resumed)
        #expect(events.map(\.sequence) == Array(7...13), "five replayed plus two buffered, the oldest dropped first")
    }

    @Test func resumingAtTheLatestYieldsOnlyWhatComesNext() async {
        let hub = EventHub(initial: Self.verdict(.unknown), bufferLimit: 4, historyLimit: 8)
        hub.publish(Self.verdict(.connected, 1))
        let resumed = hub.subscribe(resumingAfter: 2)
        hub.publish(Self.verdict(.disconnected, 2))
        hub.finish()
        #expect(await Array(resumed).map(\.sequence) == [3])
    }

    @Test func resumingJustBeforeTheOldestKeptEventStillHasNoGap() async {
        let hub = EventHub(initial: Self.verdict(.unknown), bufferLimit: 4, historyLimit: 4)
        for n in 1...9 { hub.publish(Self.verdict(n.isMultiple(of: 2) ? .connected : .disconnected, n)) }
        // History holds 7...10; after 6 nothing is missing.
        let resumed = hub.subscribe(resumingAfter: 6)
        hub.finish()
        let events = await Array(resumed)
        #expect(events.map(\.sequence) == [7, 8, 9, 10])
        #expect(events.allSatisfy { !$0.isReset })
    }

    @Test(arguments: [UInt64(2), 999, .max])
    func resumingFromOutsideTheHistoryResets(lastSequence: UInt64) async {
        let hub = EventHub(initial: Self.verdict(.unknown), bufferLimit: 4, historyLimit: 4)
        for n in 1...9 { hub.publish(Self.verdict(n.isMultiple(of: 2) ? .connected : .disconnected, n)) }
        let resumed = hub.subscribe(resumingAfter: lastSequence)
        hub.finish()
        let events = await Array(resumed)
        #expect(events.count == 1)
        #expect(events.first?.sequence == 10)
        #expect(events.first?.isReset == true)
    }

    @Test func finishingEndsEveryStreamAndLaterSubscriptionsAtOnce() async {
        let hub = EventHub(initial: Self.verdict(.unknown), bufferLimit: 4, historyLimit: 4)
        let early = hub.subscribe()
        hub.finish()
        #expect(await Array(early).count == 1)
        #expect(await Array(hub.subscribe()).isEmpty)
        #expect(hub.subscriberCount == 0)
    }
}

extension Array {
    init<S: AsyncSequence>(_ sequence: S) async where S.Element == Element, S.Failure == Never {
        var elements: [Element] = []
        for await element in sequence { elements.append(element) }
        self = elements
    }
}
