import ReachSupport
import ReachTesting
import Testing

@testable import ReachCore

/// The reaction rule's bookkeeping, driven through every interleaving of transitions and run ends
/// up to a length, against the rule stated in words: once per transition of its directions, never
/// two runs at once, a follow-up only with the latest transition when that is of its directions,
/// and every transition of its directions accounted for as run, coalesced or skipped.
@Suite("Reactions: the rule, exhaustively")
struct ReactionTableTests {
    /// What the test knows about one reaction while it drives the table.
    private struct Model {
        let id: CallbackID
        let directions: Set<TransitionDirection>
        var running: ConnectivityTransition?
        /// Transitions of either direction since the current run started.
        var sinceStart: [ConnectivityTransition] = []
        var arrivedOwn = 0
        var accounted = 0
    }

    private enum Step: CaseIterable {
        case transition, endFirst, endSecond, removeFirst
    }

    @Test func everyInterleavingOfEightStepsFollowsTheRule() async {
        let length = 8
        #expect(Step.allCases.count == 4, "two bits a step")
        // 65,536 replays: off the cooperative pool, which the tests that wait in real time need.
        await offPool {
            for number in 0..<(1 << (2 * length)) {
                replay((0..<length).map { Step.allCases[(number >> (2 * $0)) & 3] })
            }
        }
    }

    @Test func aStuckRunWarnsOncePerRunWhenTransitionsFindItOverdue() {
        var table = ReactionTable()
        let id = table.add(name: "stuck", directions: [.restored], timeout: .seconds(1)) { _ in }
        #expect(table.arrive(transition(1)).starts.count == 1)
        #expect(table.arrive(transition(2)).stuck.isEmpty, "not overdue yet: waiting is normal")
        table.markOverdue(id)
        #expect(table.arrive(transition(3)).stuck.map(\.transition.sequence) == [3])
        #expect(table.arrive(transition(4)).stuck.isEmpty, "one warning per run")
        let finish = table.finish(id)
        #expect(finish.skipped?.coalesced == 1, "restored #3 was undone by lost #4")
        #expect(finish.skipped?.sequence == 3)
        #expect(finish.next == nil)
    }

    @Test func stoppingReportsWhatWaitedAndStartsNothing() {
        var table = ReactionTable()
        let id = table.add(name: "slow", directions: [.restored], timeout: nil) { _ in }
        _ = table.arrive(transition(1))
        _ = table.arrive(transition(2))
        _ = table.arrive(transition(3))
        let finish = table.finish(id, stopping: true)
        #expect(finish.next == nil)
        #expect(finish.skipped?.outcome == .skipped)
        #expect(finish.skipped?.coalesced == 1)
    }

    /// Odd sequence numbers restore, even ones lose: transitions alternate, as the monitor's do.
    private func transition(_ sequence: UInt64) -> ConnectivityTransition {
        ConnectivityTransition(
            direction: sequence % 2 == 1 ? .restored : .lost,
            sequence: sequence,
            verdict: Verdict(
                state: sequence % 2 == 1 ? .connected : .disconnected,
                reason: .healthy,
                since: WallTime(sinceEpoch: .zero)
            )
        )
    }

    private func replay(_ steps: [Step]) {
        var table = ReactionTable()
        let firstID = table.add(name: "restored-only", directions: [.restored], timeout: nil) { _ in }
        let secondID = table.add(name: "both", directions: [.restored, .lost], timeout: nil) { _ in }
        var models = [
            Model(id: firstID, directions: [.restored]), Model(id: secondID, directions: [.restored, .lost]),
        ]
        var removed = false
        var sequence: UInt64 = 0
        var trace: String { "\(steps)" }

        func end(_ index: Int, stopping: Bool = false) {
            guard let run = models[index].running else { return }
            let finish = table.finish(models[index].id, stopping: stopping)
            let latest = models[index].sinceStart.last
            let ownSince = models[index].sinceStart.filter { models[index].directions.contains($0.direction) }
            models[index].sinceStart = []
            if let next = finish.next {
                #expect(!stopping, "nothing starts while stopping: \(trace)")
                #expect(next.transition == latest, "a follow-up runs with the latest transition: \(trace)")
                #expect(models[index].directions.contains(next.transition.direction), "\(trace)")
                #expect(next.coalesced == ownSince.count - 1, "\(trace)")
                #expect(next.transition.sequence > run.sequence)
                models[index].running = next.transition
                models[index].accounted += 1 + next.coalesced
            } else {
                let latestIsOwn = latest.map { models[index].directions.contains($0.direction) } ?? false
                #expect(
                    !latestIsOwn || stopping || (index == 0 && removed),
                    "the latest was its own, yet nothing ran: \(trace)"
                )
                #expect(
                    (finish.skipped?.coalesced ?? 0) == ownSince.count,
                    "every waiting transition is reported: \(trace)"
                )
                #expect(finish.skipped == nil || finish.skipped?.outcome == .skipped)
                models[index].running = nil
                models[index].accounted += finish.skipped?.coalesced ?? 0
            }
        }

        for step in steps {
            switch step {
            case .transition:
                sequence += 1
                let arriving = transition(sequence)
                let arrival = table.arrive(arriving)
                for index in models.indices {
                    let isOwn = models[index].directions.contains(arriving.direction)
                    let live = !(index == 0 && removed)
                    let started = arrival.starts.filter { $0.reaction.id == models[index].id }
                    if models[index].running != nil {
                        #expect(started.isEmpty, "never two runs at once: \(trace)")
                        if live {
                            models[index].sinceStart.append(arriving)
                            if isOwn { models[index].arrivedOwn += 1 }
                        }
                    } else if isOwn && live {
                        #expect(started.count == 1, "an idle reaction runs for its transition: \(trace)")
                        #expect(started.first?.transition == arriving)
                        #expect(started.first?.coalesced == 0)
                        models[index].running = arriving
                        models[index].arrivedOwn += 1
                        models[index].accounted += 1
                    } else {
                        #expect(started.isEmpty, "\(trace)")
                    }
                }
            case .endFirst: end(0)
            case .endSecond: end(1)
            case .removeFirst:
                #expect(table.remove(firstID) == !removed)
                removed = true
            }
        }
        // Stop: whatever waits is reported, nothing starts.
        for index in models.indices { end(index, stopping: true) }
        for model in models {
            #expect(
                model.accounted == model.arrivedOwn,
                "every transition of its directions is run, coalesced or skipped: \(trace)"
            )
        }
    }
}
