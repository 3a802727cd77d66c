import Dispatch
import Foundation
import GRDB
import GRDBSQLite
import ReachPOSIX
import Synchronization

/// Commits a store's enqueues on a thread of its own, one transaction (one disk flush) for every
/// enqueue that is waiting when the last commit ends.
///
/// Why a thread and not GRDB's writer queue: enqueues that arrive while a flush runs share the
/// next one (group commit), so many concurrent callers pay for one flush, not one each, and the
/// flush blocks this thread, never one of Swift's cooperative pool (a loaded disk's flush can take
/// 100 ms). The thread parks when idle: staying awake for the next enqueue was measured to make a
/// sequential caller slower on a 2-CPU VM, not faster (it holds the CPU the caller would wake on).
///
/// It writes through GRDB's writer connection (`writeWithoutTransaction` from this thread runs
/// inline, so acknowledgements written meanwhile are serialised with it), with its own prepared
/// statement: GRDB's statement cache, argument boxing and transaction bookkeeping cost about 8 µs
/// per call (measured without flushes) that the hot path does not need.
final class QueueWriter: Sendable {
    private struct Job {
        let queue: String
        let rows: [(key: String, payload: Data)]
        let time: Double
        let expiresAt: Double?
        let continuation: UnsafeContinuation<Int, any Error>
    }

    private struct State {
        var jobs: [Job] = []
        var parked = false
        var stopping = false
    }

    private let state = Mutex(State())
    private let doorbell = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the thread, which writes through `pool` until ``stop()``.
    init(pool: DatabasePool) throws(SystemCallError) {
        try DedicatedThread.start(named: "ReachKit.queue") { [self] in
            run(pool)
        }
    }

    /// Inserts `rows` into `queue`, enqueued at `time` and expiring at `expiresAt` (wall-clock
    /// seconds); returns how many were new once they are committed with `synchronous = FULL`. A
    /// cancelled caller still gets its rows committed.
    func insert(
        queue: String,
        _ rows: [(key: String, payload: Data)],
        at time: Double,
        expiresAt: Double?
    ) async throws -> Int {
        try await withUnsafeThrowingContinuation { continuation in
            let job = Job(queue: queue, rows: rows, time: time, expiresAt: expiresAt, continuation: continuation)
            let refused: Job? = state.withLock { state in
                guard !state.stopping else { return job }
                state.jobs.append(job)
                if state.parked {
                    state.parked = false
                    doorbell.signal()
                }
                return nil
            }
            refused?.continuation.resume(
                throwing: DatabaseError(resultCode: .SQLITE_MISUSE, message: "the queue store is closed")
            )
        }
    }

    /// Commits what is waiting, then ends the thread; returns once it has ended (so the
    /// connection can be closed). Later inserts fail as on a closed database.
    func stop() {
        let wasRunning = state.withLock { state in
            defer { state.stopping = true }
            if state.parked {
                state.parked = false
                doorbell.signal()
            }
            return !state.stopping
        }
        if wasRunning { finished.wait() }
    }

    private func run(_ pool: DatabasePool) {
        let statement = InsertStatement()
        while let jobs = next() {
            pool.writeWithoutTransaction { db in
                let outcome = Result {
                    try statement.commit(jobs.map { ($0.queue, $0.rows, $0.time, $0.expiresAt) }, in: db)
                }
                for (index, job) in jobs.enumerated() {
                    job.continuation.resume(with: outcome.map { $0[index] })
                }
            }
        }
        pool.writeWithoutTransaction { _ in statement.finalize() }
        finished.signal()
    }

    /// The waiting jobs, once there are some (parked until then). `nil` once stopping and nothing
    /// is left.
    private func next() -> [Job]? {
        while true {
            let taken: [Job]?? = state.withLock { state in
                if !state.jobs.isEmpty {
                    defer { state.jobs = [] }
                    return state.jobs
                }
                if state.stopping { return .some(nil) }
                state.parked = true
                return nil
            }
            if let taken { return taken }
            doorbell.wait()
        }
    }
}

/// The writer thread's prepared `INSERT OR IGNORE` and its transaction, in SQLite's C API on
/// GRDB's connection. Only the writer thread uses it, inside GRDB's writer access.
private final class InsertStatement {
    private var statement: OpaquePointer?

    /// Inserts every job's rows in one transaction; returns how many rows of each job were new.
    func commit(
        _ jobs: [(queue: String, rows: [(key: String, payload: Data)], time: Double, expiresAt: Double?)],
        in db: Database
    ) throws -> [Int] {
        let connection = db.sqliteConnection
        if statement == nil {
            let sql = "INSERT OR IGNORE INTO item (queue, key, payload, enqueued_at, expires_at) VALUES (?, ?, ?, ?, ?)"
            try check(sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil), db)
        }
        try check(sqlite3_exec(connection, "BEGIN IMMEDIATE", nil, nil, nil), db)
        do {
            let counts = try jobs.map { job in
                try job.rows.reduce(0) { added, row in
                    defer { sqlite3_reset(statement) }
                    sqlite3_bind_text(statement, 1, job.queue, -1, SQLITE_TRANSIENT)
                    sqlite3_bind_text(statement, 2, row.key, -1, SQLITE_TRANSIENT)
                    _ = row.payload.withUnsafeBytes {
                        sqlite3_bind_blob(
                            statement,
                            3,
                            $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                            Int32($0.count),
                            SQLITE_TRANSIENT
                        )
                    }
                    sqlite3_bind_double(statement, 4, job.time)
                    if let expiresAt = job.expiresAt {
                        sqlite3_bind_double(statement, 5, expiresAt)
                    } else {
                        sqlite3_bind_null(statement, 5)
                    }
                    try check(sqlite3_step(statement), db, done: SQLITE_DONE)
                    return added + Int(sqlite3_changes(connection))
                }
            }
            try check(sqlite3_exec(connection, "COMMIT", nil, nil, nil), db)
            return counts
        } catch {
            if sqlite3_get_autocommit(connection) == 0 { sqlite3_exec(connection, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// Before the connection closes (SQLite will not close one with a statement left).
    func finalize() {
        sqlite3_finalize(statement)
        statement = nil
    }

    private func check(_ code: Int32, _ db: Database, done: Int32 = SQLITE_OK) throws {
        guard code != done else { return }
        throw DatabaseError(
            resultCode: ResultCode(rawValue: code),
            message: String(cString: sqlite3_errmsg(db.sqliteConnection))
        )
    }
}

/// SQLite copies the bytes before the bind returns.
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
