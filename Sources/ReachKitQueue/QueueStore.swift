import Foundation
import GRDB
import ReachPOSIX

/// The SQLite file that holds durable queues: opened in WAL mode with `synchronous = FULL`, so
/// that a committed write survives a crash and a power loss, and checked at open.
///
/// One store may hold many queues (each ``DurableQueue`` names its own). A file that is not a
/// database, or fails SQLite's integrity check, is moved aside (`NAME.corrupt-TIMESTAMP`, with its
/// `-wal` and `-shm`) and reported as ``QueueStoreError/corrupt(path:movedTo:detail:)``: never
/// overwritten, never a crash. Opening the same path again then starts an empty store.
public final class QueueStore: Sendable {
    /// The database file.
    public let path: String
    let pool: DatabasePool
    private let writer: QueueWriter

    /// Opens (creating it and its directory if need be) the store at `path`, for example
    /// ``defaultPath(application:environment:)``.
    ///
    /// It creates, checks and migrates the file with synchronous disk writes: call it at start-up,
    /// or off Swift's cooperative pool, not from a task that others wait on.
    public init(path: String) throws(QueueStoreError) {
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: directory.isEmpty ? "." : directory,
                withIntermediateDirectories: true
            )
        } catch {
            throw .unusable(path: path, detail: "cannot create its directory: \(error.localizedDescription)")
        }
        var configuration = Configuration()
        configuration.label = "ReachKit.QueueStore"
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            // Every commit reaches the disk before the write returns: what "durable" promises.
            // (GRDB opens its WAL writer with NORMAL, which a power loss may undo.)
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            let problems = try pool.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            guard problems == ["ok"] else {
                try? pool.close()
                throw QueueStoreError.corrupt(
                    path: path,
                    movedTo: try CorruptFile.moveAside(path),
                    detail: problems.prefix(3).joined(separator: "; ")
                )
            }
            try Self.migrate(pool)
            self.pool = pool
            self.writer = try QueueWriter(pool: pool)
        } catch let error as QueueStoreError {
            throw error
        } catch let error as DatabaseError where [.SQLITE_NOTADB, .SQLITE_CORRUPT].contains(error.resultCode) {
            let movedTo: String
            do { movedTo = try CorruptFile.moveAside(path) } catch { throw .unusable(path: path, detail: "\(error)") }
            throw .corrupt(path: path, movedTo: movedTo, detail: error.message ?? "\(error.resultCode)")
        } catch let error as DatabaseError {
            throw .unusable(path: path, detail: error.message ?? "\(error)")
        } catch {
            throw .unusable(path: path, detail: "\(error)")
        }
    }

    /// Commits the enqueues still waiting, ends the store's writer thread and closes the file,
    /// checkpointing its write-ahead log into it: synchronous disk work, like opening, so call it
    /// off the cooperative pool. Without it the last release of the store does the same, on
    /// whatever thread that happens.
    public func close() throws {
        writer.stop()
        try pool.close()
    }

    deinit {
        writer.stop()
    }

    /// Inserts `rows` into `queue` in one transaction, committed with `synchronous = FULL`: on disk
    /// when this returns. Returns how many were new (a key already in the queue is left as it was).
    /// Committed by the store's ``QueueWriter``, with other enqueues that wait at the same time.
    func insert(
        queue: String,
        _ rows: [(key: String, payload: Data)],
        at time: Double,
        expiresAt: Double?
    ) async throws -> Int {
        try await writer.insert(queue: queue, rows, at: time, expiresAt: expiresAt)
    }

    /// Runs `body` in a transaction committed with `synchronous = NORMAL`, and returns what it
    /// returns: for acknowledgements (an item delivered, a failure counted) and for managing items
    /// (cancelled, expired, a dead letter retried or dropped). In WAL mode such a commit survives
    /// the program being killed; only a power loss or kernel crash may undo it, and then the item
    /// is delivered again (or its cancellation is), which at-least-once allows. Enqueues keep
    /// `FULL`: losing one would lose work.
    @discardableResult
    func acknowledge<Value: Sendable>(_ body: @escaping @Sendable (Database) throws -> Value) async throws -> Value {
        try await pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            defer { try? db.execute(sql: "PRAGMA synchronous = FULL") }
            var value: Value?
            try db.inTransaction {
                value = try body(db)
                return .commit
            }
            return value!
        }
    }

    /// Where a program keeps its queues unless it says otherwise: `$XDG_STATE_HOME/APPLICATION/queue.sqlite`,
    /// else `~/.local/state/APPLICATION/queue.sqlite` (state that should outlive a restart but is not
    /// worth a backup, as the XDG base directory specification puts it).
    public static func defaultPath(
        application: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        let base =
            environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/state")
        return "\(base)/\(application)/queue.sqlite"
    }

    private static func migrate(_ pool: DatabasePool) throws {
        var migrator = DatabaseMigrator()
        // `id` is the rowid without AUTOINCREMENT (which costs a page write per insert): a new row
        // still gets an id above every row present, which is all FIFO order needs. The next item
        // is found by walking the rowid order (no index of its own: one less page to write and
        // sync per enqueue; dead letters are few, and delivered items leave the table).
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE item (
                        id INTEGER PRIMARY KEY,
                        queue TEXT NOT NULL,
                        key TEXT NOT NULL,
                        payload BLOB NOT NULL,
                        enqueued_at REAL NOT NULL,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        not_before REAL NOT NULL DEFAULT 0,
                        dead INTEGER NOT NULL DEFAULT 0,
                        last_error TEXT,
                        UNIQUE (queue, key)
                    );
                    """
            )
        }
        // Expiry and the dead letters' reason and time (what `DeadLetter` reports). Items that died
        // before have their reason read from their attempts (one: rejected, more: exhausted), and
        // the migration's time as their time of death.
        migrator.registerMigration("v2") { db in
            try db.execute(
                sql: """
                    ALTER TABLE item ADD COLUMN expires_at REAL;
                    ALTER TABLE item ADD COLUMN dead_reason TEXT;
                    ALTER TABLE item ADD COLUMN died_at REAL;
                    UPDATE item SET dead_reason = CASE WHEN attempts <= 1 THEN 'rejected' ELSE 'exhausted' END,
                        died_at = CAST(strftime('%s', 'now') AS REAL)
                        WHERE dead = 1;
                    """
            )
        }
        try migrator.migrate(pool)
    }
}

/// A queue store that cannot be used; each case names the file.
public enum QueueStoreError: Error, CustomStringConvertible {
    /// The file is not a SQLite database or is damaged; it was renamed to `movedTo` and kept.
    case corrupt(path: String, movedTo: String, detail: String)
    /// The file or its directory cannot be opened, read or written.
    case unusable(path: String, detail: String)

    public var description: String {
        switch self {
        case .corrupt(let path, let movedTo, let detail):
            "the queue database \(path) is corrupt (\(detail)); it was moved aside to \(movedTo) and kept for inspection"
        case .unusable(let path, let detail):
            "the queue database \(path) cannot be used: \(detail)"
        }
    }
}
