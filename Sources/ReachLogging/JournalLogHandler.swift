import Logging

/// A swift-log handler that writes to the systemd journal with structured fields, so that
/// `journalctl` can filter by state, target or interface and `journalctl -x` explains events.
///
/// Each line becomes `MESSAGE`, `PRIORITY` (from the level), `SYSLOG_IDENTIFIER`,
/// `CODE_FILE`/`CODE_LINE`/`CODE_FUNC`, the metadata as `REACHD_*` fields (see
/// ``JournalFieldName``), and a `MESSAGE_ID` when the line names a ``ReachCore/ReachLogEvent``.
/// Sending happens on the ``JournalWriter``'s thread; this handler never blocks.
package struct JournalLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    package var logLevel: Logger.Level

    private let writer: JournalWriter

    /// - Parameter writer: Shared by every handler of the process, so lines keep their order.
    package init(level: Logger.Level, writer: JournalWriter) {
        self.logLevel = level
        self.writer = writer
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var complete = event
        complete.metadata = lineMetadata(for: event)
        writer.submit(complete)
    }
}
