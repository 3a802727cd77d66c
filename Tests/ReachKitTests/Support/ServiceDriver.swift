import Foundation
import Logging
import ReachConfig
import ReachCore
import ReachKit
import ReachKitEmbedded
import ReachPOSIX
import ReachTesting
import Synchronization

/// An embedded service whose monitor the test feeds by hand (a link snapshot, probe results)
/// instead of netlink and probers: connectivity on cue, for the units that depend on it.
final class ServiceDriver: Sendable {
    let service: EmbeddedService
    private let runner: Task<Void, Never>

    init(clock: MonitorClock = .system()) throws {
        service = try EmbeddedService(configuration: Configuration(targets: [.http("server")]), clock: clock, logger: .quiet)
        let monitor = service.monitor
        runner = Task { await monitor.run() }
        monitor.update(links: .of(.usable()))
    }

    var monitor: ConnectivityMonitor { service.monitor }

    func connect() { monitor.record(.ok("server"), epoch: monitor.probeEpoch) }
    func disconnect() { monitor.record(.refused("server"), epoch: monitor.probeEpoch) }

    deinit { runner.cancel() }
}

/// Values a test collects from concurrent callbacks.
final class Collected<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }
}

/// Opens a queue store off the cooperative pool: opening a SQLite file creates, checks and
/// migrates it with synchronous disk writes, which must not hold one of the pool's few threads.
func openStore(_ path: String) async throws -> QueueStore {
    try await offPool { Result { try QueueStore(path: path) } }.get()
}

/// Closes a queue store off the cooperative pool: closing checkpoints the WAL with synced writes.
func closeStore(_ store: QueueStore) async {
    await offPool { try? store.close() }
}
