import GRDBSQLite

/// What SQLite said when a call failed: its result code and its words.
struct SQLiteError: Error, CustomStringConvertible {
    /// The extended result code (`SQLITE_IOERR_WRITE`, say).
    var extendedCode: Int32
    var message: String

    /// The error of a call on the connection `handle` that returned `code`.
    init(code: Int32, handle: OpaquePointer?) {
        if let handle, sqlite3_extended_errcode(handle) & 0xFF == code & 0xFF {
            extendedCode = sqlite3_extended_errcode(handle)
            message = String(cString: sqlite3_errmsg(handle))
        } else {
            extendedCode = code
            message = String(cString: sqlite3_errstr(code))
        }
    }

    /// The primary result code (`SQLITE_IOERR`, `SQLITE_FULL`, `SQLITE_CORRUPT`, ...).
    var code: Int32 { extendedCode & 0xFF }

    var description: String { "SQLite error \(code): \(message)" }
}
