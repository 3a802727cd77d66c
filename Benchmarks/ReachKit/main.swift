// ReachKit's drain throughput against a local HTTP server. (reachkit-enqueue-benchmark measures
// enqueues, reachkit-idle-client memory.)
//
//   reachkit-benchmark drain DIR URL [ITEMS]   POSTs each item to URL, concurrency 1 and 8
//
// Benchmarks/run-reachkit-benchmarks runs all three against a release build.
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ReachKit
import ReachKitBenchmarkSupport
import ReachKitQueue
import ReachKitTesting

let arguments = Array(CommandLine.arguments.dropFirst())
let logger = Logger(label: "reachkit-benchmark") { _ in SwiftLogNoOpLogHandler() }

func drainBenchmark(directory: String, url: String, items: Int) async throws {
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    for concurrency in [1, 8] {
        // Connected from the start, and staying so: the drain alone is measured.
        let service = TestConnectivityService(.connected)
        let store = try QueueStore(path: "\(directory)/drain-\(concurrency).sqlite")
        let queue = DurableQueue<Payload>(
            name: "drain",
            store: store,
            service: service,
            policy: QueuePolicy(concurrency: concurrency),
            logger: logger
        ) { delivery in
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Idempotency-Key", value: delivery.key)
            request.body = .bytes(try JSONEncoder().encode(delivery.item))
            let response = try await http.execute(request, timeout: .seconds(5))
            _ = try await response.body.collect(upTo: 1 << 16)
            guard response.status.code / 100 == 2 else {
                throw DeliveryFailure.retryable("HTTP \(response.status.code)")
            }
        }
        try await queue.enqueue(
            contentsOf: (0..<items).map { (key: "d-\($0)", item: Payload(number: $0, text: "upload \($0)")) }
        )
        let started = now()
        let draining = Task { await queue.run() }
        while try await queue.stats().pending + queue.stats().inFlight > 0 {
            try await Task.sleep(for: .milliseconds(5))
        }
        let elapsed = now() - started
        draining.cancel()
        say(
            String(
                format: "RESULT drain to a local HTTP server, concurrency %d: %.0f items/s (%d items in %.2f s)",
                concurrency,
                Double(items) / elapsed,
                items,
                elapsed
            )
        )
    }
    try await http.shutdown()
}

guard arguments.first == "drain", arguments.count > 2 else {
    say("usage: reachkit-benchmark drain DIR URL [ITEMS]")
    exit(2)
}
try await drainBenchmark(
    directory: arguments[1],
    url: arguments[2],
    items: arguments.count > 3 ? Int(arguments[3])! : 2_000
)
