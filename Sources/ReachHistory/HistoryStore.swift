import GRDBSQLite
import ReachCore
import ReachPOSIX
import ReachSupport

/// reachd's history file: every verdict and target transition, a per-target per-minute rollup, and
/// the spans reachd ran (so that time it did not record reads as unknown, not as uptime).
///
/// SQLite in WAL mode with `synchronous = NORMAL`: a committed batch survives reachd being killed
/// (only a power loss may undo the last ones), and a commit costs no disk flush. The file is
/// checked at open; one that is not a database or fails SQLite's quick check is moved aside
/// (`NAME.corrupt-TIMESTAMP`, with its `-wal` and `-shm`) and a fresh one started
/// (``HistoryStoreOpening/movedAside``). `auto_vacuum = INCREMENTAL` lets pruning give pages back.
package final class HistoryStore: Sendable {
    /// The database file.
    package let path: String
    let pool: SQLitePool

    /// Opens (creating it, and its directory when `createDirectory`) the file at `path`; a corrupt
    /// file is moved aside and a fresh one opened. Synchronous disk work: call it off the threads that run tasks.
    ///
    package static func open(path: String, createDirectory: Bool) throws(HistoryStoreError) -> Opening {
        let directory = path.deletingLastPathComponent
        if createDirectory {
            do { try Directory.create(directory.isEmpty ? "." : directory) } catch {
                throw .unusable(path: path, detail: "cannot create its directory: \(error.reason)")
            }
        } else if directory.isEmpty || !Directory.exists(directory) {
            throw .noDirectory(path: path)
        }
        let detail: String
        do {
            return Opening(store: try HistoryStore(path: path), movedAside: nil)
        } catch {
            switch error {
            case .other(let other): throw .unusable(path: path, detail: other)
            case .corrupt(let complaint): detail = complaint
            }
        }
        let aside: String
        do { aside = try CorruptFile.moveAside(path) } catch {
            throw .unusable(path: path, detail: "it is corrupt (\(detail)) and cannot be moved aside: \(error)")
        }
        do { return Opening(store: try HistoryStore(path: path), movedAside: (aside, detail)) } catch {
            throw .unusable(path: path, detail: "\(error)")
        }
    }

    /// An opened store, and where a corrupt file was moved (with SQLite's complaint), if one was.
    package struct Opening: Sendable {
        package var store: HistoryStore
        package var movedAside: (path: String, detail: String)?

        package var values: (HistoryStore, (path: String, detail: String)?) { (store, movedAside) }
    }

    private enum OpenFailure: Error {
        case corrupt(String)
        case other(String)
    }

    private init(path: String) throws(OpenFailure) {
        self.path = path
        do {
            let pool = try SQLitePool(path: path, label: "reachd.history", busyTimeout: .seconds(5))
            let problems = try pool.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            guard problems == ["ok"] else {
                pool.close()
                throw OpenFailure.corrupt(problems.prefix(3).joined(separator: "; "))
            }
            // Before the first table exists, so that pruning can hand pages back to the file system.
            try pool.writeWithoutTransaction { db in
                if try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") == 0 {
                    try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL; VACUUM")
                }
            }
            try Self.migrate(pool)
            self.pool = pool
        } catch let failure as OpenFailure {
            throw failure
        } catch let error as SQLiteError where [SQLITE_NOTADB, SQLITE_CORRUPT].contains(error.code) {
            throw .corrupt(error.message)
        } catch let error as SQLiteError {
            throw .other(error.message)
        } catch {
            throw .other("\(error)")
        }
    }

    /// Checkpoints the write-ahead log into the file and closes it.
    package func close() {
        pool.close()
    }

    /// The schema, by version. Which versions a file has is recorded where GRDB's migrator, which
    /// wrote the files of earlier releases, recorded it (`grdb_migrations`), so that a file moves
    /// between releases both ways.
    private static let migrations: [(version: String, sql: String)] = [
        (
            "v1",
            // Times are seconds since the epoch. `scope` is "" for the verdict, "#quality" for its
            // quality, else a target's name.
            """
            CREATE TABLE run (id INTEGER PRIMARY KEY, started_at REAL NOT NULL, last_seen_at REAL NOT NULL);
            CREATE INDEX run_last_seen ON run (last_seen_at);
            CREATE TABLE transition (
                id INTEGER PRIMARY KEY, run INTEGER NOT NULL, at REAL NOT NULL, scope TEXT NOT NULL,
                state TEXT NOT NULL, reason TEXT, fault TEXT, target TEXT
            );
            CREATE INDEX transition_scope ON transition (scope, run, at);
            CREATE INDEX transition_at ON transition (at);
            CREATE TABLE minute (
                target TEXT NOT NULL, start INTEGER NOT NULL, probes INTEGER NOT NULL, failures TEXT NOT NULL,
                latency_p50 REAL, latency_p99 REAL, PRIMARY KEY (target, start)
            ) WITHOUT ROWID;
            CREATE INDEX minute_start ON minute (start);
            """
        )
    ]

    private static func migrate(_ pool: SQLitePool) throws {
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            let applied = Set(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
            for (version, sql) in migrations where !applied.contains(version) {
                try db.execute(sql: sql)
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [version])
            }
        }
    }
}

/// A history file that cannot be used; reachd then runs without history.
package enum HistoryStoreError: Error, CustomStringConvertible {
    /// The file or its directory cannot be created, opened, read or written.
    case unusable(path: String, detail: String)
    /// The default file's directory does not exist: reachd runs outside its unit (from a source
    /// tree, in a test), where it creates no state directory of its own.
    case noDirectory(path: String)

    package var description: String {
        switch self {
        case .unusable(let path, let detail): "the history file \(path) cannot be used: \(detail)"
        case .noDirectory(let path):
            "\(path.deletingLastPathComponent) does not exist (the unit's StateDirectory=reachd creates it); set history.path to keep history elsewhere"
        }
    }
}
