import Dispatch
import GRDBSQLite
import Synchronization

/// A SQLite file in WAL mode, as history uses it: one connection that writes and one that reads
/// (a read sees the last commit and never waits for one), each behind a lock and used off the
/// threads that run tasks (in reachd, its event loops), on a queue of its own: a commit can wait
/// on the disk.
final class SQLitePool: Sendable {
    private let writer: Locked
    private let reader: Locked
    private let writes: DispatchQueue
    private let reads: DispatchQueue

    /// Opens (creating it) the file at `path` in WAL mode with `synchronous = NORMAL`; `label`
    /// names the queues.
    init(path: String, label: String, busyTimeout: Duration) throws(SQLiteError) {
        let writer = try SQLiteConnection(path: path, readOnly: false, busyTimeout: busyTimeout)
        // Every reply but "wal" (a file that cannot keep a log) leaves the file as it was.
        guard try String.fetchOne(writer, sql: "PRAGMA journal_mode = WAL") == "wal" else {
            throw SQLiteError(code: SQLITE_CANTOPEN, handle: nil)
        }
        try writer.execute(sql: "PRAGMA synchronous = NORMAL")
        self.writer = Locked(writer)
        reader = Locked(try SQLiteConnection(path: path, readOnly: true, busyTimeout: busyTimeout))
        writes = DispatchQueue(label: "\(label).write")
        reads = DispatchQueue(label: "\(label).read")
    }

    /// Runs `body` on the reading connection, in a transaction: everything it reads is of one commit.
    func read<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try reader.use { connection in
            var value: T?
            try connection.inTransaction(deferred: true) {
                value = try body(connection)
                return .commit
            }
            return value!
        }
    }

    /// Runs `body` on the writing connection in one transaction.
    func write<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writeWithoutTransaction { connection in
            var value: T?
            try connection.inTransaction {
                value = try body(connection)
                return .commit
            }
            return value!
        }
    }

    /// Runs `body` on the writing connection, which begins and ends its own transactions.
    func writeWithoutTransaction<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writer.use(body)
    }

    /// ``read(_:)`` off the threads that run tasks.
    func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await run(on: reads) { try self.read(body) }
    }

    /// ``write(_:)`` off the threads that run tasks.
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await run(on: writes) { try self.write(body) }
    }

    /// ``writeWithoutTransaction(_:)`` off the threads that run tasks.
    func writeWithoutTransaction<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) throws -> T
    ) async throws -> T {
        try await run(on: writes) { try self.writeWithoutTransaction(body) }
    }

    /// Closes both connections; the writer last, which checkpoints the log into the file.
    func close() {
        reader.use { $0.close() }
        writer.use { $0.close() }
    }

    /// A connection and the lock it is used under.
    ///
    /// `@unchecked Sendable`: the connection is touched only while the lock is held, one caller at a time.
    private final class Locked: @unchecked Sendable {
        private let lock = Mutex(())
        private let connection: SQLiteConnection

        init(_ connection: SQLiteConnection) {
            self.connection = connection
        }

        func use<T: Sendable>(_ body: (SQLiteConnection) throws -> T) rethrows -> T {
            try lock.withLock { _ in try body(connection) }
        }
    }

    private func run<T: Sendable>(on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> T) async throws -> T
    {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result(catching: body)) }
        }
    }
}
