import FoundationEssentials
import GRDB

/// One item as the store keeps it, chosen for delivery.
struct StoredItem: Sendable {
    let id: Int64
    let key: String
    let payload: Data
    let attempts: Int
    /// Wall-clock seconds.
    let enqueuedAt: Double
    let expiresAt: Double?
}

/// A dead letter as the store keeps it, its payload still encoded.
struct StoredDeadLetter: Sendable {
    let key: String
    let payload: Data
    let attempts: Int
    let lastError: String?
    let reason: String?
    let diedAt: Double?
}

/// What may be delivered next.
enum NextItem: Sendable {
    case due(StoredItem)
    /// Nothing may start before this.
    case waiting(Duration)
    case empty
}

/// Every statement a queue runs on its items, in one place: one row per item, `queue` naming the
/// queue, `dead` the dead letters. Times are wall-clock seconds. `excluding` lists the items in
/// flight, which a count of pending items, an expiry sweep and the choice of the next item pass over.
extension QueueStore {
    /// Items of `queue` that are pending and not in flight; dead letters; when the oldest waiting
    /// item was enqueued.
    func counts(queue: String, excluding running: [Int64]) async throws -> (pending: Int, dead: Int, oldest: Double?) {
        try await pool.read { db in
            let pending =
                try Int.fetchOne(
                    db,
                    sql: "SELECT count(*) FROM item WHERE queue = ? AND dead = 0 \(Self.excluding(running))",
                    arguments: StatementArguments([queue]) + StatementArguments(running)
                ) ?? 0
            let dead =
                try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE queue = ? AND dead = 1", arguments: [queue])
                ?? 0
            let oldest = try Double.fetchOne(
                db,
                sql: "SELECT min(enqueued_at) FROM item WHERE queue = ? AND dead = 0",
                arguments: [queue]
            )
            return (pending, dead, oldest)
        }
    }

    /// The dead letters of `queue`, oldest first.
    func deadLetters(queue: String) async throws -> [StoredDeadLetter] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT key, payload, attempts, last_error, dead_reason, died_at FROM item WHERE queue = ? AND dead = 1 ORDER BY died_at, id",
                arguments: [queue]
            ).map { row in
                StoredDeadLetter(
                    key: row["key"],
                    payload: row["payload"],
                    attempts: row["attempts"],
                    lastError: row["last_error"],
                    reason: row["dead_reason"],
                    diedAt: row["died_at"]
                )
            }
        }
    }

    /// Deletes the item of `queue` with `key`, pending or dead; returns its id, or `nil` when there was none.
    func remove(queue: String, key: String, dead: Bool) async throws -> Int64? {
        try await acknowledge { db in
            let id = try Int64.fetchOne(
                db,
                sql: "SELECT id FROM item WHERE queue = ? AND key = ? AND dead = ?",
                arguments: [queue, key, dead]
            )
            if let id { try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [id]) }
            return id
        }
    }

    /// Moves the dead letter with `key` back to the pending items, at the end of the queue as if
    /// enqueued `now`, its attempts from zero, with as long to live as it had. Returns `nil` when
    /// there was no such dead letter, else its new expiry (`nil` inside: none).
    func revive(queue: String, key: String, now: Double) async throws -> Double?? {
        try await acknowledge { db in
            try db.execute(
                sql: """
                    UPDATE item SET id = (SELECT max(id) + 1 FROM item), dead = 0, dead_reason = NULL, died_at = NULL, attempts = 0,
                        not_before = 0, last_error = NULL, expires_at = ? + expires_at - enqueued_at, enqueued_at = ?
                    WHERE queue = ? AND key = ? AND dead = 1
                    """,
                arguments: [now, now, queue, key]
            )
            guard db.changesCount > 0 else { return nil }
            return .some(
                try Double.fetchOne(
                    db,
                    sql: "SELECT expires_at FROM item WHERE queue = ? AND key = ?",
                    arguments: [queue, key]
                )
            )
        }
    }

    /// Deletes the dead letters of `queue` that died at or before `before` (all when `nil`); returns how many.
    func purgeDeadLetters(queue: String, diedBefore before: Double?) async throws -> Int {
        try await acknowledge { db in
            try db.execute(
                sql: "DELETE FROM item WHERE queue = ? AND dead = 1 AND (? IS NULL OR died_at <= ?)",
                arguments: [queue, before, before]
            )
            return db.changesCount
        }
    }

    /// Moves the pending items of `queue` whose expiry is at or before `now` to the dead letters;
    /// returns how many, and the next expiry after `now`.
    func expire(queue: String, now: Double, excluding running: [Int64]) async throws -> (expired: Int, next: Double?) {
        try await acknowledge { db in
            try db.execute(
                sql: """
                    UPDATE item SET dead = 1, dead_reason = 'expired', died_at = ?
                    WHERE queue = ? AND dead = 0 AND expires_at <= ? \(Self.excluding(running))
                    """,
                arguments: [now, queue, now] + StatementArguments(running)
            )
            let expired = db.changesCount
            let next = try Double.fetchOne(
                db,
                sql: "SELECT min(expires_at) FROM item WHERE queue = ? AND dead = 0 AND expires_at > ?",
                arguments: [queue, now]
            )
            return (expired, next)
        }
    }

    /// The next item of `queue` to deliver at `now`. In order, that is the oldest pending item,
    /// which may have to wait for its retry time; else the oldest that is due, items waiting for
    /// their retry time passed over. Expired items are never chosen. A retry time past `horizon`
    /// (the wall clock was set back since it was written) counts as due.
    func nextItem(
        queue: String,
        now: Double,
        horizon: Double,
        inOrder: Bool,
        excluding running: [Int64]
    ) async throws -> NextItem {
        try await pool.read { db in
            let live = "queue = ? AND dead = 0 AND (expires_at IS NULL OR expires_at > ?) \(Self.excluding(running))"
            let arguments: StatementArguments = [queue, now] + StatementArguments(running)
            let due = inOrder ? "" : "AND (not_before <= ? OR not_before > ?)"
            let row = try Row.fetchOne(
                db,
                sql:
                    "SELECT id, key, payload, attempts, enqueued_at, not_before, expires_at FROM item WHERE \(live) \(due) ORDER BY id LIMIT 1",
                arguments: inOrder ? arguments : arguments + [now, horizon] as StatementArguments
            )
            guard let row else {
                guard !inOrder,
                    let soonest = try Double.fetchOne(
                        db,
                        sql: "SELECT min(not_before) FROM item WHERE \(live)",
                        arguments: arguments
                    )
                else {
                    return .empty
                }
                return .waiting(.milliseconds(Int64(((soonest - now) * 1000).rounded(.up))))
            }
            let notBefore: Double = row["not_before"]
            let wait = notBefore > horizon ? 0 : notBefore - now
            guard wait <= 0 else { return .waiting(.milliseconds(Int64((wait * 1000).rounded(.up)))) }
            return .due(
                StoredItem(
                    id: row["id"],
                    key: row["key"],
                    payload: row["payload"],
                    attempts: row["attempts"],
                    enqueuedAt: row["enqueued_at"],
                    expiresAt: row["expires_at"]
                )
            )
        }
    }

    /// Deletes a delivered item.
    func delivered(_ id: Int64) async throws {
        try await acknowledge { db in
            try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [id])
        }
    }

    /// Records a failed delivery: its attempts, its retry time, why, and its move to the dead
    /// letters (`death`, at `now`) when it is one.
    func failed(
        _ id: Int64,
        attempts: Int,
        notBefore: Double,
        death: DeadLetterReason?,
        at now: Double,
        reason: String
    ) async throws {
        try await acknowledge { db in
            try db.execute(
                sql:
                    "UPDATE item SET attempts = ?, not_before = ?, dead = ?, dead_reason = ?, died_at = ?, last_error = ? WHERE id = ?",
                arguments: [attempts, notBefore, death != nil, death?.rawValue, death.map { _ in now }, reason, id]
            )
        }
    }

    /// `AND id NOT IN (?, …)` for `ids`, or nothing when there are none.
    private static func excluding(_ ids: [Int64]) -> String {
        ids.isEmpty ? "" : "AND id NOT IN (\(ids.map { _ in "?" }.joined(separator: ",")))"
    }
}
