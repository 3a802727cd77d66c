import GRDBSQLite

/// One row a query returned, its values copied out of SQLite, read by column name.
struct SQLiteRow {
    let names: [String]
    let values: [Value]

    /// SQLite's storage classes (history stores no blobs).
    enum Value {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)

        init(_ statement: OpaquePointer, column: Int32) {
            switch sqlite3_column_type(statement, column) {
            case SQLITE_INTEGER: self = .integer(sqlite3_column_int64(statement, column))
            case SQLITE_FLOAT: self = .real(sqlite3_column_double(statement, column))
            case SQLITE_NULL: self = .null
            default: self = .text(sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "")
            }
        }
    }

    /// The value of `column` as `T`: a missing column or NULL reads as `nil`, or, for a
    /// non-optional `T`, as zero or the empty string (the schema's columns are NOT NULL where
    /// history reads them so).
    subscript<T: SQLiteValue>(_ column: String) -> T {
        let value = names.firstIndex(of: column).map { values[$0] } ?? .null
        return T(sqliteValue: value) ?? T.whenNull
    }

    /// Every row of `sql` with `arguments` on `connection`.
    static func fetchAll(
        _ connection: SQLiteConnection,
        sql: String,
        arguments: [(any SQLiteValue)?] = []
    ) throws(SQLiteError) -> [SQLiteRow] {
        try connection.rows(sql: sql, arguments: arguments)
    }
}

/// A Swift value history stores in, or reads from, a column.
protocol SQLiteValue {
    var sqliteValue: SQLiteRow.Value { get }
    /// `nil` when the stored value is of another kind (or NULL).
    init?(sqliteValue: SQLiteRow.Value)
    /// What NULL reads as.
    static var whenNull: Self { get }
}

extension SQLiteValue {
    /// The first column of the first row of `sql` on `connection`, `nil` when there is none.
    static func fetchOne(_ connection: SQLiteConnection, sql: String) throws(SQLiteError) -> Self? {
        try connection.rows(sql: sql).first.flatMap { $0.values.first.flatMap(Self.init(sqliteValue:)) }
    }

    /// The first column of every row of `sql` on `connection`.
    static func fetchAll(_ connection: SQLiteConnection, sql: String) throws(SQLiteError) -> [Self] {
        try connection.rows(sql: sql).compactMap { $0.values.first.flatMap(Self.init(sqliteValue:)) }
    }
}

extension Int64: SQLiteValue {
    var sqliteValue: SQLiteRow.Value { .integer(self) }
    init?(sqliteValue: SQLiteRow.Value) {
        switch sqliteValue {
        case .integer(let value): self = value
        case .real(let value):
            guard let whole = Int64(exactly: value.rounded(.towardZero)) else { return nil }
            self = whole
        case .null, .text: return nil
        }
    }
    static var whenNull: Int64 { 0 }
}

extension Int: SQLiteValue {
    var sqliteValue: SQLiteRow.Value { .integer(Int64(self)) }
    init?(sqliteValue: SQLiteRow.Value) {
        guard let value = Int64(sqliteValue: sqliteValue) else { return nil }
        self.init(value)
    }
    static var whenNull: Int { 0 }
}

extension Double: SQLiteValue {
    var sqliteValue: SQLiteRow.Value { .real(self) }
    init?(sqliteValue: SQLiteRow.Value) {
        switch sqliteValue {
        case .integer(let value): self.init(value)
        case .real(let value): self = value
        case .null, .text: return nil
        }
    }
    static var whenNull: Double { 0 }
}

extension String: SQLiteValue {
    var sqliteValue: SQLiteRow.Value { .text(self) }
    init?(sqliteValue: SQLiteRow.Value) {
        guard case .text(let value) = sqliteValue else { return nil }
        self = value
    }
    static var whenNull: String { "" }
}

extension Optional: SQLiteValue where Wrapped: SQLiteValue {
    var sqliteValue: SQLiteRow.Value { self?.sqliteValue ?? .null }
    init?(sqliteValue: SQLiteRow.Value) {
        self = Wrapped(sqliteValue: sqliteValue)
    }
    static var whenNull: Wrapped? { nil }
}
