import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// The built `queue-drain-helper`, next to the test bundle.
let queueDrainHelper = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().appending(
    path: "queue-drain-helper"
).path

/// The tests that start reachd, servers and helper processes, one at a time: together they would
/// load a 2-core machine enough to push other suites' timing bounds.
@Suite("ReachKit against real processes", .serialized)
struct ReachKitProcessTests {}

extension ReachKitProcessTests {
    @Suite("A durable queue across a crash")
    struct QueueCrashTests {
        @Test func aProcessKilledMidDrainLosesNothingAndRedeliversOnlyWhatWasInFlight() async throws {
            let directory = try TemporaryDirectory("crash")
            let path = "\(directory)/queue.sqlite"
            let count = 400
            let enqueue = try await runProgram(queueDrainHelper, ["enqueue", path, "\(count)"])
            #expect(enqueue.status == 0, "\(enqueue.errors)")

            // From item 100 on, deliveries hang: the kill finds four in flight (the helper's concurrency).
            let first = try ChildProcess(
                "queue-drain-helper",
                executable: queueDrainHelper,
                arguments: ["drain", path, "100"]
            )
            try await first.waitForLine(timeout: .seconds(60)) { $0 == "start item-103" }
            first.signal(SIGKILL)
            await first.waitForExit()
            let started = Set(first.output.filter { $0.hasPrefix("start ") }.map { $0.dropFirst(6) })
            let done = Set(first.output.filter { $0.hasPrefix("done ") }.map { $0.dropFirst(5) })
            #expect(done.count == 100, "killed mid-drain, with items 100 to 103 in flight: \(done.count) done")

            let second = try ChildProcess(
                "queue-drain-helper",
                executable: queueDrainHelper,
                arguments: ["drain", path]
            )
            try await second.waitForLine(timeout: .seconds(60)) { $0 == "drained" }
            await second.waitForExit()
            let redone = second.output.filter { $0.hasPrefix("done ") }.map { $0.dropFirst(5) }
            let everything = done.union(redone)
            #expect(everything == Set((0..<count).map { "item-\($0)"[...] }), "no item lost")
            let duplicates = done.intersection(redone)
            // In flight at the kill: started and not yet acknowledged. The helper delivers four at a
            // time, and a delivery is acknowledged just after its "done" line.
            #expect(duplicates.count <= 4, "only items in flight are delivered again: \(duplicates.sorted())")
            #expect(duplicates.isSubset(of: started))
            #expect(Set(redone).count == redone.count, "the second run delivers each item once")
        }
    }
}
