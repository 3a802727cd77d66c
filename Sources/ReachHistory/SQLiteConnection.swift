import GRDBSQLite

/// One connection to a SQLite file, on the system's SQLite: what history needs of it and no more
/// (statements with arguments, rows, transactions), so that reachd links no database library.
///
/// Not thread-safe: ``SQLitePool`` keeps each connection behind a lock and uses it on one queue.
final class SQLiteConnection {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    private var isClosed = false

    /// Opens (creating, unless `readOnly`) the file at `path`, waiting up to `busyTimeout` for
    /// another connection's lock.
    init(path: String, readOnly: Bool, busyTimeout: Duration) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteError(code: code, handle: handle)
            sqlite3_close(handle)
            throw error
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, Int32(busyTimeout / .milliseconds(1)))
    }

    deinit {
        close()
    }

    /// Finalizes the statements and closes the connection; the last connection to close a WAL file
    /// checkpoints it and removes the log.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs `sql`, which may hold several statements, none with arguments.
    func execute(sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: handle) }
    }

    /// Runs the one statement `sql` with `arguments` for its `?`s.
    func execute(sql: String, arguments: [(any SQLiteValue)?]) throws(SQLiteError) {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// The rows of the query `sql` with `arguments`.
    func rows(sql: String, arguments: [(any SQLiteValue)?] = []) throws(SQLiteError) -> [SQLiteRow] {
        try cachedStatement(sql: sql).rows(arguments: arguments)
    }

    /// `sql` compiled once per connection.
    func cachedStatement(sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        var compiled: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &compiled, nil)
        guard code == SQLITE_OK, let compiled else { throw SQLiteError(code: code, handle: handle) }
        let statement = SQLiteStatement(compiled, connection: handle)
        statements[sql] = statement
        return statement
    }

    /// Runs `body` in a transaction, committed when it returns `.commit` and rolled back when it
    /// returns `.rollback` or throws. A `deferred` one takes no lock until it reads or writes (a
    /// reading connection's); otherwise it takes the write lock at once.
    func inTransaction(deferred: Bool = false, _ body: () throws -> TransactionCompletion) throws {
        try execute(sql: deferred ? "BEGIN DEFERRED" : "BEGIN IMMEDIATE")
        let completion: TransactionCompletion
        do { completion = try body() } catch {
            try? execute(sql: "ROLLBACK")
            throw error
        }
        switch completion {
        case .commit:
            do { try execute(sql: "COMMIT") } catch {
                try? execute(sql: "ROLLBACK")
                throw error
            }
        case .rollback: try execute(sql: "ROLLBACK")
        }
    }

    enum TransactionCompletion {
        case commit, rollback
    }

    /// The rowid of the last row this connection inserted.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    /// The rows the last statement changed.
    var changesCount: Int { Int(sqlite3_changes(handle)) }
}

/// A compiled statement of one connection.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: OpaquePointer

    fileprivate init(_ handle: OpaquePointer, connection: OpaquePointer) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    func execute(arguments: [(any SQLiteValue)?]) throws(SQLiteError) {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else { throw SQLiteError(code: code, handle: connection) }
    }

    func rows(arguments: [(any SQLiteValue)?]) throws(SQLiteError) -> [SQLiteRow] {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        let names = (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
        var rows: [SQLiteRow] = []
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW {
            rows.append(
                SQLiteRow(names: names, values: names.indices.map { SQLiteRow.Value(handle, column: Int32($0)) })
            )
            code = sqlite3_step(handle)
        }
        guard code == SQLITE_DONE else { throw SQLiteError(code: code, handle: connection) }
        return rows
    }

    private func bind(_ arguments: [(any SQLiteValue)?]) throws(SQLiteError) {
        sqlite3_clear_bindings(handle)
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let code =
                switch argument?.sqliteValue ?? .null {
                case .null: sqlite3_bind_null(handle, position)
                case .integer(let value): sqlite3_bind_int64(handle, position, value)
                case .real(let value): sqlite3_bind_double(handle, position, value)
                case .text(let value): sqlite3_bind_text(handle, position, value, -1, SQLiteStatement.transient)
                }
            guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: connection) }
        }
    }

    /// `SQLITE_TRANSIENT`, a macro Swift cannot import: SQLite copies the text before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
