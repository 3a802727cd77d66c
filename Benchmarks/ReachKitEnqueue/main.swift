// Durable enqueue throughput: one item per call, beside a bare SQLite insert-and-commit loop with
// the same durability (WAL, synchronous=FULL) and the same table on the same disk, interleaved
// item by item in the same run; then batched. Links ReachKit and ReachKitQueue alone, so that it builds quickly.
//
//   reachkit-enqueue-benchmark DIR [ROUNDS] [PER_ROUND]
//
// Benchmarks/run-reachkit-benchmarks runs it against a release build.
import Foundation
import GRDBSQLite
import Logging
import ReachKit
import ReachKitBenchmarkSupport
import ReachKitQueue

let arguments = Array(CommandLine.arguments.dropFirst())
let logger = Logger(label: "reachkit-enqueue-benchmark") { _ in SwiftLogNoOpLogHandler() }

/// The peer: sqlite3 directly, one `BEGIN; INSERT; COMMIT` per item, WAL and synchronous=FULL, in
/// a file with the queue's own table (made by opening a ``QueueStore`` there): the same row and
/// unique index to write, so that the ratio measures ReachKit's overhead alone.
final class BareSQLite {
    private var db: OpaquePointer?
    private var insert: OpaquePointer?

    init(path: String) throws {
        try QueueStore(path: path).close()
        precondition(sqlite3_open(path, &db) == SQLITE_OK)
        for pragma in ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL"] {
            precondition(sqlite3_exec(db, pragma, nil, nil, nil) == SQLITE_OK)
        }
        let sql = "INSERT OR IGNORE INTO item (queue, key, payload, enqueued_at) VALUES ('bench', ?, ?, ?)"
        precondition(sqlite3_prepare_v2(db, sql, -1, &insert, nil) == SQLITE_OK)
    }

    func insert(key: String, payload: Data) {
        sqlite3_exec(db, "BEGIN", nil, nil, nil)
        sqlite3_bind_text(insert, 1, key, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        _ = payload.withUnsafeBytes {
            sqlite3_bind_blob(
                insert,
                2,
                $0.baseAddress,
                Int32($0.count),
                unsafeBitCast(-1, to: sqlite3_destructor_type.self)
            )
        }
        sqlite3_bind_double(insert, 3, Date().timeIntervalSince1970)
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
    // Never run: not connected, so an enqueue starts no drain and is measured alone (a connected
    // service would add one kick of the drain loop, an AsyncStream yield).
    let service = ReachdService(endpoint: ReachdEndpoint(base: ReachdEndpoint.defaultURL), logger: logger)
    let store = try QueueStore(path: "\(directory)/kit.sqlite")
    let queue = DurableQueue<Payload>(name: "bench", store: store, service: service, logger: logger) { _ in }
    let bare = try BareSQLite(path: "\(directory)/bare.sqlite")
    let encoder = JSONEncoder()
    var kitSamples: [Double] = []
    var bareSamples: [Double] = []
    var kitRates: [Double] = []
    var bareRates: [Double] = []
    for round in 0..<rounds {
        // Interleaved item by item (the side that goes first alternates), so that both sides see
        // the same disk: another process's writes slow whichever fsync is running, by milliseconds.
        var kitTime = 0.0
        var bareTime = 0.0
        for index in 0..<perRound {
            let item = Payload(number: index, text: "reading \(index) of round \(round)")
            for side in index.isMultiple(of: 2) ? [true, false] : [false, true] {
                let before = now()
                if side {
                    bare.insert(key: "bare-\(round)-\(index)", payload: try encoder.encode(item))
                } else {
                    try await queue.enqueue(item, key: "kit-\(round)-\(index)")
                }
                let took = now() - before
                if side {
                    bareSamples.append(took)
                    bareTime += took
                } else {
                    kitSamples.append(took)
                    kitTime += took
                }
            }
        }
        kitRates.append(Double(perRound) / kitTime)
        bareRates.append(Double(perRound) / bareTime)
    }
    let kitRate = kitRates.sorted()[kitRates.count / 2]
    let bareRate = bareRates.sorted()[bareRates.count / 2]
    say(
        String(
            format: "RESULT enqueue unbatched: %.0f items/s (median of %d rounds of %d), per item %@",
            kitRate,
            rounds,
            perRound,
            summary(kitSamples)
        )
    )
    say(String(format: "RESULT bare sqlite insert+commit: %.0f items/s, per item %@", bareRate, summary(bareSamples)))
    let ratios = zip(kitRates, bareRates).map { $0 / $1 }.sorted()
    say(
        String(
            format:
                "RESULT ratio unbatched/bare: %.2f of the medians; per round %.2f median, range %.2f-%.2f (goal >= 0.70)",
            kitRate / bareRate,
            ratios[ratios.count / 2],
            ratios.first ?? 0,
            ratios.last ?? 0
        )
    )

    var batchRates: [Double] = []
    for round in 0..<rounds {
        let items = (0..<1_000).map {
            (key: "batch-\(round)-\($0)", item: Payload(number: $0, text: "reading \($0) of batch \(round)"))
        }
        let started = now()
        try await queue.enqueue(contentsOf: items)
        batchRates.append(Double(items.count) / (now() - started))
    }
    say(
        String(
            format: "RESULT enqueue batched (1,000 per call): %.0f items/s median, min %.0f (goal >= 10,000)",
            batchRates.sorted()[batchRates.count / 2],
            batchRates.min() ?? 0
        )
    )
}

guard let directory = arguments.first else {
    say("usage: reachkit-enqueue-benchmark DIR [ROUNDS] [PER_ROUND]")
    exit(2)
}
try await enqueueBenchmark(
    directory: directory,
    rounds: arguments.count > 1 ? Int(arguments[1])! : 5,
    perRound: arguments.count > 2 ? Int(arguments[2])! : 200
)
