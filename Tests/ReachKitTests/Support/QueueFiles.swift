import ReachKitQueue
import ReachTesting

/// Opens a queue store off the cooperative pool: opening a SQLite file creates, checks and
/// migrates it with synchronous disk writes, which must not hold one of the pool's few threads.
func openStore(_ path: String) async throws -> QueueStore {
    try await offPool { Result { try QueueStore(path: path) } }.get()
}

/// Closes a queue store off the cooperative pool: closing checkpoints the WAL with synced writes.
func closeStore(_ store: QueueStore) async {
    await offPool { try? store.close() }
}
