import Foundation
import ReachTestRigs

/// Logs its input through reachd's log output (Tests/JournalLogHelper), built next to the test bundle.
let journalLogHelper = BuiltProducts.directory.appending(path: "journal-log-helper").path
