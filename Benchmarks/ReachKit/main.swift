// ReachKit's figures: durable enqueue throughput beside a bare SQLite insert-and-commit loop with
// the same durability (WAL, synchronous=FULL) on the same disk in the same run, batched enqueues,
// and drain throughput against a local HTTP server. (reachkit-idle-client measures memory.)
//
//   reachkit-benchmark enqueue DIR [ROUNDS] [PER_ROUND]   unbatched (interleaved with the bare loop) and batched
//   reachkit-benchmark drain DIR URL [ITEMS]              POSTs each item to URL, concurrency 1 and 8
//
// Benchmarks/run-reachkit-benchmarks runs all three against a release build.
#if canImport(Glibc)
import Glibc
#endif
import AsyncHTTPClient
import Foundation
import GRDBSQLite
import Logging
import ReachConfig
import ReachCore
import ReachKit
import ReachKitEmbedded

/// Writes a line at once (print's buffer would hold it when stdout is a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
let logger = Logger(label: "reachkit-benchmark") { _ in SwiftLogNoOpLogHandler() }

struct Payload: Codable, Sendable {
    var number: Int
    var text: String
}

/// Median and 99th percentile of `samples` (seconds), in milliseconds.
func summary(_ samples: [Double]) -> String {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return "no samples" }
    let median = sorted[sorted.count / 2] * 1000
    let p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))] * 1000
    return String(format: "median %.2f ms, p99 %.2f ms", median, p99)
}

func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// A service that is connected from the start: a loopback target, one success recorded by hand.
func connectedService() throws -> EmbeddedService {
    let target = ProbeTarget(
        name: "server", check: .http(HTTPCheck(url: "http://127.0.0.1:1/", endpoint: HostPort(host: "127.0.0.1", port: 1))))
    let service = try EmbeddedService(configuration: Configuration(targets: [target]), logger: logger)
    service.monitor.record(.success("server", latency: .milliseconds(1)), epoch: service.monitor.probeEpoch)
    return service
}

/// The peer: sqlite3 directly, one INSERT and COMMIT per item, WAL and synchronous=FULL.
final class BareSQLite {
    private var db: OpaquePointer?
    private var insert: OpaquePointer?

    init(path: String) {
        precondition(sqlite3_open(path, &db) == SQLITE_OK)
        for pragma in ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, key TEXT UNIQUE, payload BLOB)"] {
            precondition(sqlite3_exec(db, pragma, nil, nil, nil) == SQLITE_OK)
        }
        precondition(sqlite3_prepare_v2(db, "INSERT INTO item (key, payload) VALUES (?, ?)", -1, &insert, nil) == SQLITE_OK)
    }

    func insert(key: String, payload: Data) {
        sqlite3_exec(db, "BEGIN", nil, nil, nil)
        sqlite3_bind_text(insert, 1, key, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        _ = payload.withUnsafeBytes { sqlite3_bind_blob(insert, 2, $0.baseAddress, Int32($0.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self)) }
        precondition(sqlite3_step(insert) == SQLITE_DONE)
        sqlite3_reset(insert)
        precondition(sqlite3_exec(db, "COMMIT", nil, nil, nil) == SQLITE_OK)
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_close(db)
    }
}

func enqueueBenchmark(directory: String, rounds: Int, perRound: Int) async throws {
    let service = try connectedService()
    let store = try QueueStore(path: "\(directory)/kit.sqlite")
    // Not drained: run() is never called, so enqueues are measured alone.
    let queue = DurableQueue<Payload>(name: "bench", store: store, service: service, logger: logger) { _ in }
    let bare = BareSQLite(path: "\(directory)/bare.sqlite")
    let encoder = JSONEncoder()
    var kitSamples: [Double] = []
    var bareSamples: [Double] = []
    var kitRates: [Double] = []
    var bareRates: [Double] = []
    for round in 0..<rounds {
        // Interleaved rounds, so that both sides see the same disk and the same neighbours.
        var started = now()
        for index in 0..<perRound {
            let item = Payload(number: index, text: "reading \(index) of round \(round)")
            let before = now()
            bare.insert(key: "bare-\(round)-\(index)", payload: try encoder.encode(item))
            bareSamples.append(now() - before)
        }
        bareRates.append(Double(perRound) / (now() - started))
        started = now()
        for index in 0..<perRound {
            let item = Payload(number: index, text: "reading \(index) of round \(round)")
            let before = now()
            try await queue.enqueue(item, key: "kit-\(round)-\(index)")
            kitSamples.append(now() - before)
        }
        kitRates.append(Double(perRound) / (now() - started))
    }
    let kitRate = kitRates.sorted()[kitRates.count / 2]
    let bareRate = bareRates.sorted()[bareRates.count / 2]
    say(String(format: "RESULT enqueue unbatched: %.0f items/s (median of %d rounds of %d), per item %@", kitRate, rounds, perRound, summary(kitSamples)))
    say(String(format: "RESULT bare sqlite insert+commit: %.0f items/s, per item %@", bareRate, summary(bareSamples)))
    say(String(format: "RESULT ratio unbatched/bare: %.2f (goal >= 0.70)", kitRate / bareRate))

    var batchRates: [Double] = []
    for round in 0..<rounds {
        let items = (0..<1_000).map { (key: "batch-\(round)-\($0)", item: Payload(number: $0, text: "reading \($0) of batch \(round)")) }
        let started = now()
        try await queue.enqueue(contentsOf: items)
        batchRates.append(Double(items.count) / (now() - started))
    }
    say(String(format: "RESULT enqueue batched (1,000 per call): %.0f items/s median, min %.0f (goal >= 10,000)", batchRates.sorted()[batchRates.count / 2], batchRates.min() ?? 0))
}

func drainBenchmark(directory: String, url: String, items: Int) async throws {
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    for concurrency in [1, 8] {
        let service = try connectedService()
        let monitor = service.monitor
        let monitorTask = Task { await monitor.run() }
        let store = try QueueStore(path: "\(directory)/drain-\(concurrency).sqlite")
        let queue = DurableQueue<Payload>(
            name: "drain", store: store, service: service, policy: QueuePolicy(concurrency: concurrency), logger: logger
        ) { delivery in
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Idempotency-Key", value: delivery.key)
            request.body = .bytes(try JSONEncoder().encode(delivery.item))
            let response = try await http.execute(request, timeout: .seconds(5))
            _ = try await response.body.collect(upTo: 1 << 16)
            guard response.status.code / 100 == 2 else { throw DeliveryFailure.retryable("HTTP \(response.status.code)") }
        }
        try await queue.enqueue(contentsOf: (0..<items).map { (key: "d-\($0)", item: Payload(number: $0, text: "upload \($0)")) })
        let started = now()
        let draining = Task { await queue.run() }
        while try await queue.stats().pending + queue.stats().inFlight > 0 { try await Task.sleep(for: .milliseconds(5)) }
        let elapsed = now() - started
        draining.cancel()
        monitorTask.cancel()
        say(String(format: "RESULT drain to a local HTTP server, concurrency %d: %.0f items/s (%d items in %.2f s)", concurrency, Double(items) / elapsed, items, elapsed))
    }
    try await http.shutdown()
}

switch arguments.first {
case "enqueue":
    try await enqueueBenchmark(directory: arguments[1], rounds: arguments.count > 2 ? Int(arguments[2])! : 5, perRound: arguments.count > 3 ? Int(arguments[3])! : 200)
case "drain":
    try await drainBenchmark(directory: arguments[1], url: arguments[2], items: arguments.count > 3 ? Int(arguments[3])! : 2_000)
default:
    say("usage: reachkit-benchmark enqueue DIR [ROUNDS] [PER_ROUND] | drain DIR URL [ITEMS]")
    exit(2)
}
