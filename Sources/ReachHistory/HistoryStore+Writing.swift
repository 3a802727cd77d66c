import ReachAPI
import ReachCore
import ReachSupport

extension HistoryStore {
    /// Starts a run of reachd at `time`; returns its id, which every batch of the run names.
    func beginRun(at time: Double) async throws -> Int64 {
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO run (started_at, last_seen_at) VALUES (?, ?)", arguments: [time, time])
            return db.lastInsertedRowID
        }
    }

    /// Commits `batch` in one transaction and moves the run's recorded end to `batch.seenAt`.
    func write(_ batch: HistoryBatch, run: Int64) async throws(HistoryWriteFailure) {
        do {
            try await insert(batch, run: run)
        } catch {
            throw HistoryWriteFailure(error, path: path)
        }
    }

    private func insert(_ batch: HistoryBatch, run: Int64) async throws {
        try await pool.write { db in
            let transition = try db.cachedStatement(
                sql:
                    "INSERT INTO transition (run, at, scope, state, reason, fault, target) VALUES (?, ?, ?, ?, ?, ?, ?)"
            )
            for row in batch.transitions {
                try transition.execute(arguments: [
                    run, row.at, row.scope, row.state, row.reason, row.fault, row.target,
                ])
            }
            // A minute split by a restart keeps its larger part.
            let minute = try db.cachedStatement(
                sql: """
                    INSERT INTO minute (target, start, probes, failures, latency_p50, latency_p99) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (target, start) DO UPDATE SET probes = excluded.probes, failures = excluded.failures,
                        latency_p50 = excluded.latency_p50, latency_p99 = excluded.latency_p99
                    WHERE excluded.probes > minute.probes
                    """
            )
            for row in batch.minutes {
                let failures = String(decoding: APIJSON.encode(row.failures), as: UTF8.self)
                try minute.execute(arguments: [
                    row.target, row.start, row.probes, failures, row.latencyP50, row.latencyP99,
                ])
            }
            try db.execute(
                sql: "UPDATE run SET last_seen_at = max(last_seen_at, ?) WHERE id = ?",
                arguments: [batch.seenAt, run]
            )
        }
    }

    /// Deletes what is older than `retention` before `now`; then, while the file's used pages take
    /// more than `maximumSize`, the oldest minutes and then the oldest transitions, in slices, until
    /// they take at most nine tenths of it. Freed pages go back to the file system.
    ///
    /// - Returns: How many rows the size cap deleted (0 when the file was within it).
    @discardableResult
    func prune(now: Double, retention: Duration, maximumSize: Int) async throws -> Int {
        let cutoff = now - retention.seconds
        return try await pool.writeWithoutTransaction { db in
            try db.inTransaction {
                try db.execute(sql: "DELETE FROM transition WHERE at < ?", arguments: [cutoff])
                try db.execute(sql: "DELETE FROM minute WHERE start < ?", arguments: [Int64(cutoff.rounded(.down))])
                try db.execute(sql: "DELETE FROM run WHERE last_seen_at < ?", arguments: [cutoff])
                return .commit
            }
            var deleted = 0
            if try Self.usedBytes(db) > maximumSize {
                while try Self.usedBytes(db) > maximumSize * 9 / 10 {
                    try db.inTransaction {
                        try db.execute(
                            sql: """
                                DELETE FROM minute WHERE (target, start) IN (SELECT target, start FROM minute ORDER BY start LIMIT 2000)
                                """
                        )
                        if db.changesCount == 0 {
                            try db.execute(
                                sql:
                                    "DELETE FROM transition WHERE id IN (SELECT id FROM transition ORDER BY at LIMIT 2000)"
                            )
                        }
                        return .commit
                    }
                    guard db.changesCount > 0 else { break }
                    deleted += db.changesCount
                }
            }
            try db.execute(sql: "PRAGMA incremental_vacuum")
            return deleted
        }
    }

    /// The bytes of the file's pages that hold data (free pages excluded).
    static func usedBytes(_ db: SQLiteConnection) throws -> Int {
        let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
        let size = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        return (pages - free) * size
    }

    /// The bytes the file's used pages take now.
    package func usedBytes() throws -> Int {
        try pool.read { db in try Self.usedBytes(db) }
    }
}
