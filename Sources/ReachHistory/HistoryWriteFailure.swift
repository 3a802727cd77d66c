import GRDBSQLite

/// A commit to the history file that failed; what it held stays in memory for the next try.
///
/// A full file system is told apart (SQLite's `SQLITE_FULL`) because its remedy is the
/// administrator's: free space there, and the rows kept in memory are written at the next try.
package struct HistoryWriteFailure: Error, CustomStringConvertible {
    /// The history file.
    package var path: String
    /// Whether the file system holding the file is full.
    package var isDiskFull: Bool
    /// SQLite's or the system's words.
    package var detail: String

    init(_ error: any Error, path: String) {
        self.path = path
        if let error = error as? SQLiteError {
            isDiskFull = error.code == SQLITE_FULL
            detail = error.message
        } else {
            isDiskFull = false
            detail = "\(error)"
        }
    }

    package var description: String {
        isDiskFull ? "the file system holding \(path) is full (\(detail)): free space there" : "\(path): \(detail)"
    }
}
