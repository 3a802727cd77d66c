import ReachSupport
import ReachTesting
import Testing

/// The fan-out under the hub and the reaction reports (the hub's own rules are in EventHubTests).
@Suite("Broadcast")
struct BroadcastTests {
    @Test func subscribersThatComeAndGoWithoutASendLeaveNothingBehind() async throws {
        let broadcast = Broadcast<Int>(initial: 0, bufferLimit: 4)
        let survivor = Task {
            var values: [Int] = []
            for await value in broadcast.subscribe() { values.append(value) }
            return values
        }
        try await waitUntil("the survivor parked") { broadcast.parking.readers == 1 }
        for round in 1...20 {
            let leavers = (0..<100).map { _ in Task { for await _ in broadcast.subscribe() {} } }
            try await waitUntil("round \(round) parked") { broadcast.parking.readers == 101 }
            for leaver in leavers { leaver.cancel() }
            for leaver in leavers { await leaver.value }
            #expect(broadcast.parking.readers == 1)
        }
        #expect(broadcast.parking.slots <= 128, "2,000 cancelled readers left \(broadcast.parking.slots) slots")
        broadcast.send(1)
        broadcast.finish()
        #expect(await survivor.value == [0, 1])
    }

    @Test func aReaderCancelledRoundsAfterItSubscribedEndsAloneAndTheOthersKeepEveryValue() async throws {
        let broadcast = Broadcast<Int>(initial: 0, bufferLimit: 4)
        func reader() -> Task<[Int], Never> {
            Task {
                var values: [Int] = []
                for await value in broadcast.subscribe() { values.append(value) }
                return values
            }
        }
        let (first, second, third) = (reader(), reader(), reader())
        for value in 1...3 {
            try await waitUntil("every reader parked before \(value)") { broadcast.parking.readers == 3 }
            broadcast.send(value)
        }
        try await waitUntil("every reader parked again") { broadcast.parking.readers == 3 }
        second.cancel()
        #expect(await second.value == [0, 1, 2, 3])
        #expect(broadcast.parking.readers == 2)
        broadcast.send(4)
        broadcast.finish()
        #expect(await first.value == [0, 1, 2, 3, 4])
        #expect(await third.value == [0, 1, 2, 3, 4])
    }
}
