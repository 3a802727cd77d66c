import Logging
import Synchronization

/// Collects what a logger logged, at every level, so a test can count warnings and wait for a
/// debug note.
package final class CapturedLogs: Sendable {
    package struct Entry: Sendable, CustomStringConvertible {
        package var level: Logger.Level
        package var message: String
        package var metadata: Logger.Metadata

        package var description: String { "\(level): \(message) \(metadata)" }
    }

    private let entries = Mutex<[Entry]>([])

    package init() {}

    /// A logger that records here, down to `trace`.
    package var logger: Logger {
        Logger(label: "reachd.test") { _ in Handler(logs: self) }
    }

    package var all: [Entry] { entries.withLock { $0 } }
    package var warnings: [Entry] { all.filter { $0.level >= .warning } }

    package func contains(_ text: String) -> Bool {
        entries.withLock { $0.contains { $0.message.contains(text) } }
    }

    fileprivate func append(_ entry: Entry) {
        entries.withLock { $0.append(entry) }
    }

    private struct Handler: LogHandler {
        let logs: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            logs.append(
                Entry(
                    level: event.level,
                    message: "\(event.message)",
                    metadata: metadata.merging(event.metadata ?? [:]) { $1 }
                )
            )
        }
    }
}
