import Foundation
import Logging
import ReachConfig
import ReachCore
import ReachHistory
import ReachSupport

// Writes history as fast as it can, for the test that kills it mid-write: each batch is
// `batchSize` verdict transitions committed in one transaction. Before each commit it prints
// `begin N`, after it `committed N TOTAL`: a kill between the two lands inside a write.
let arguments = CommandLine.arguments
guard arguments.count == 3, let batchSize = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: history-writer-helper PATH BATCH-SIZE\n".utf8))
    exit(64)
}
let opening = try HistoryStore.open(path: arguments[1], createDirectory: true)
let start = Date().timeIntervalSince1970
let tick = LockedCounter()
// Each transition a millisecond after the last, so that every one is a change with its own time.
let clock: @Sendable () -> WallTime = { WallTime(sinceEpoch: .milliseconds(Int64(start * 1000) + tick.next())) }
let recorder = try await HistoryRecorder(
    store: opening.store,
    settings: HistorySettings(),
    clock: clock,
    logger: Logger(label: "helper")
)
var total = 0
for batch in 1... {
    for index in 0..<batchSize {
        let state: ConnectivityState = index % 2 == 0 ? .disconnected : .connected
        recorder.record(
            Verdict(
                state: state,
                reason: state == .connected ? .healthy : .targetFailed(target: "api", reason: .timeout),
                since: clock()
            )
        )
    }
    total += batchSize
    say("begin \(batch)")
    try await recorder.flush()
    say("committed \(batch) \(total)")
}

/// One unbuffered line on standard output: what the test reads is what happened.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64 = 0
    func next() -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
