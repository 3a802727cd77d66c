// A program that uses ReachKit as a kiosk or an uploader would: a cache-warming callback on
// restoration, and an upload queue that keeps work while offline and drains when connectivity
// returns. It imports ReachKit, ReachKitQueue (the durable queue) and ReachKitEmbedded (the in-process
// monitor), and nothing else.
//
//   swift run reachkit-example reachd [TOKEN_FILE]  # follow a local reachd ($REACHD_ENDPOINT or 127.0.0.1:9780),
//                                                   # sending the bearer token in TOKEN_FILE when reachd wants one
//   swift run reachkit-example embedded [CONFIG]    # no daemon: watch links and probe in-process, with
//                                                   # reachd's configuration (CONFIG, $REACHD_CONFIG, or the default)
//
// It enqueues one upload every 2 seconds (to "http://127.0.0.1:8080/upload", which it only
// pretends to send) and prints what happens until SIGINT (Ctrl-C) or SIGTERM, which stop it
// gracefully: the queue lets a delivery under way finish, then the service stops. (Printed into a
// pipe, its lines are buffered; `stdbuf -oL` makes them line by line.)
import ReachKit
import ReachKitEmbedded
import ReachKitQueue

var logger = Logger(label: "reachkit-example")
logger.logLevel = .notice
let arguments = CommandLine.arguments.dropFirst()
let mode = arguments.first ?? "reachd"

// One line chooses where connectivity comes from; everything below is the same for both.
let service: any ConnectivityService =
    mode == "embedded"
    ? try EmbeddedService(configurationFile: arguments.dropFirst().first, logger: logger)
    : ReachdService(endpoint: try ReachdEndpoint.resolve(tokenFile: arguments.dropFirst().first), logger: logger)

struct Upload: Codable, Sendable {
    var reading: Int
}

let store = try QueueStore(path: QueueStore.defaultPath(application: "reachkit-example"))
print("queue file: \(store.path)")
// A reading not uploaded within a day is worth nothing: it becomes a dead letter (reason `expired`).
let uploads = DurableQueue<Upload>(
    name: "uploads",
    store: store,
    service: service,
    policy: QueuePolicy(expiry: .seconds(86_400)),
    logger: logger
) { delivery in
    // A real program POSTs here, sending delivery.key as an Idempotency-Key header.
    print("uploaded reading \(delivery.item.reading) (key \(delivery.key), attempt \(delivery.attempt))")
}

service.onConnectivityRestored(named: "warm-cache") { transition in
    print("connectivity restored (#\(transition.sequence)): warming the cache")
}
service.onConnectivityLost(named: "go-offline") { transition in
    print("connectivity lost (#\(transition.sequence), \(transition.verdict.reason)): uploads wait in \(store.path)")
}

let printing = Task {
    for await verdict in service.verdicts() {
        let fault = verdict.fault.map { ", fault: \($0.code)" } ?? ""
        let signIn = verdict.portal?.userPortalURL.map { ", sign in at \($0)" } ?? ""
        print(
            "verdict: \(verdict.state.rawValue) \(verdict.reason.code) (\(verdict.reason))\(fault)\(signIn), likely connected: \(service.isLikelyConnected)"
        )
        // What the desktop notification says, for the program's own banner.
        if let message = verdict.message { print("banner: \(message.title) \(message.body)") }
    }
}
let producing = Task {
    // Keys unique across runs: an item left from an earlier run keeps its own.
    let run = UInt32.random(in: .min ... .max)
    var reading = 0
    while !Task.isCancelled {
        reading += 1
        try await uploads.enqueue(Upload(reading: reading), key: "reading-\(run)-\(reading)")
        let stats = try await uploads.stats()
        print(
            "queued reading \(reading): \(stats.pending) pending, \(stats.dead) dead, oldest \(stats.oldestPendingAge.map { "\($0)" } ?? "-")"
        )
        try await Task.sleep(for: .seconds(2))
    }
}

// Stopped in reverse order: the queue first (deliveries under way finish), then the service.
try await ServiceGroup(services: [service, uploads], gracefulShutdownSignals: [.sigint, .sigterm], logger: logger).run()
producing.cancel()
await printing.value
print("stopped")
