import Foundation
import Logging
import ReachKit
import ReachKitQueue
import ReachKitTesting

// Drains a durable queue in a process of its own, so that a test can kill it mid-drain.
//
//   queue-drain-helper enqueue PATH COUNT   enqueues items 0..<COUNT (keys "item-N"), then exits
//   queue-drain-helper drain PATH [HANG_AT] prints "start KEY" and "done KEY" around each delivery
//                                           (which takes 2 ms), then "drained" when nothing is left;
//                                           deliveries of items from HANG_AT on never end (for a kill)
#if canImport(Glibc)
import Glibc
#endif

/// Writes a line at once (print's buffer would hold it when stdout is a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    say("usage: queue-drain-helper enqueue PATH COUNT | drain PATH")
    exit(2)
}
let logger = Logger(label: "queue-drain-helper") { _ in SwiftLogNoOpLogHandler() }
let store = try QueueStore(path: arguments[2])
let hangAt = arguments.count > 3 && arguments[1] == "drain" ? Int(arguments[3]) ?? .max : .max
let service = TestConnectivityService(.connected)
let queue = DurableQueue<Int>(
    name: "uploads",
    store: store,
    service: service,
    policy: QueuePolicy(concurrency: 4),
    logger: logger
) { delivery in
    say("start \(delivery.key)")
    // A delivery that hangs on purpose (until the process is killed), and a delivery's own work.
    if delivery.item >= hangAt { try await Task.sleep(for: .seconds(3600)) }
    try await Task.sleep(for: .milliseconds(2))
    say("done \(delivery.key)")
}

switch arguments[1] {
case "enqueue":
    let count = Int(arguments[3]) ?? 0
    try await queue.enqueue(contentsOf: (0..<count).map { (key: "item-\($0)", item: $0) })
    say("enqueued \(count)")
case "drain":
    let draining = Task { await queue.run() }
    // A child program (no ReachTesting here): it polls the store's own counts, the event itself,
    // and the test that runs it waits for its "drained" line with a deadline.
    while true {
        let stats = try await queue.stats()
        if stats.pending == 0, stats.inFlight == 0 { break }
        try await Task.sleep(for: .milliseconds(20))
    }
    say("drained")
    draining.cancel()
default:
    exit(2)
}
