// A program that uses ReachKit as a kiosk or an uploader would: a cache-warming callback on
// restoration, and an upload queue that keeps work while offline and drains when connectivity
// returns.
//
//   swift run reachkit-example reachd     # follow a local reachd ($REACHD_ENDPOINT or 127.0.0.1:9780)
//   swift run reachkit-example embedded [CONFIG]  # no daemon: watch links and probe in-process, with
//                                                 # reachd's configuration (CONFIG, $REACHD_CONFIG, or the default)
//
// It enqueues one upload every 2 seconds (to "http://127.0.0.1:8080/upload", which it only
// pretends to send) and prints what happens until Ctrl-C.
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import ReachConfig
import ReachCore
import ReachKit
import ReachKitEmbedded

/// Writes a line at once (print's buffer would hold it when stdout is a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .notice
    return handler
}
let logger = Logger(label: "reachkit-example")
let mode = CommandLine.arguments.dropFirst().first ?? "reachd"

// One line chooses where connectivity comes from; everything below is the same for both.
let service: any ConnectivityService =
    mode == "embedded"
    ? try EmbeddedService(
        configuration: Configuration.load(
            from: .resolve(commandLine: CommandLine.arguments.dropFirst(2).first, environment: ProcessInfo.processInfo.environment)),
        logger: logger)
    : ReachdService(endpoint: try ReachdEndpoint.resolve(tokenFile: ProcessInfo.processInfo.environment["REACHD_TOKEN_FILE"]), logger: logger)

struct Upload: Codable, Sendable {
    var reading: Int
    var takenAt: Double
}

let store = try QueueStore(path: QueueStore.defaultPath(application: "reachkit-example"))
say("queue file: \(store.path)")
let uploads = DurableQueue<Upload>(name: "uploads", store: store, service: service, logger: logger) { delivery in
    // A real program POSTs here, sending delivery.key as an Idempotency-Key header.
    say("uploaded reading \(delivery.item.reading) (key \(delivery.key), attempt \(delivery.attempt))")
}

service.onConnectivityRestored(named: "warm-cache") { transition in
    say("connectivity restored (#\(transition.sequence)): warming the cache")
}
service.onConnectivityLost(named: "go-offline") { transition in
    say("connectivity lost (#\(transition.sequence), \(transition.verdict.reason)): uploads wait in \(store.path)")
}

let serviceTask = Task { try await service.run() }
let queueTask = Task { await uploads.run() }
let verdictTask = Task {
    for await verdict in service.verdicts() {
        say("verdict: \(verdict.state.rawValue) \(verdict.reason.code) (\(verdict.reason)), likely connected: \(service.isLikelyConnected)")
    }
}

signal(SIGINT, SIG_IGN)
let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .main)
let stop = AsyncStream.makeStream(of: Void.self)
interrupt.setEventHandler { stop.continuation.yield() }
interrupt.resume()

let producer = Task {
    var reading = 0
    while !Task.isCancelled {
        reading += 1
        try await uploads.enqueue(Upload(reading: reading, takenAt: Date().timeIntervalSince1970), key: "reading-\(UUID().uuidString)")
        let stats = try await uploads.stats()
        say("queued reading \(reading): \(stats.pending) pending, \(stats.dead) dead, oldest \(stats.oldestPendingAge.map { "\($0)" } ?? "-")")
        try await Task.sleep(for: .seconds(2))
    }
}

for await _ in stop.stream { break }
say("stopping")
producer.cancel()
queueTask.cancel()
serviceTask.cancel()
verdictTask.cancel()
_ = await queueTask.value
_ = try? await serviceTask.value
