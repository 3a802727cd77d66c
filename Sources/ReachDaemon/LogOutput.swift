import Logging
import ReachConfig
import ReachLogging

/// Where reachd's log lines go, decided once at start from `log.target`: structured entries in the
/// journal, or logfmt lines on standard error (also the journal's fallback, so there is one format
/// for people to read wherever the lines land).
package struct LogOutput: Sendable {
    /// `.journald` or `.stderr`: what `auto` resolved to, or the journal's writer could not start.
    package let target: LogSettings.Target
    private let level: Logger.Level
    private let writer: JournalWriter?

    /// How long ``finish()`` waits for journald to take the last lines.
    package static let finishTimeout: Duration = .seconds(1)

    package init(settings: LogSettings, environment: [String: String], identifier: String = "reachd") {
        level = settings.level
        let wanted = Self.resolve(settings.target, environment: environment)
        writer =
            wanted == .journald
            ? try? JournalWriter(identifier: identifier, fallback: LogfmtLogHandler(label: identifier, level: .trace))
            : nil
        target = writer == nil ? .stderr : .journald
    }

    /// `auto` is the journal when standard error is the journal's stream (a systemd service) or
    /// when journald answers on its socket; standard error otherwise.
    package static func resolve(_ target: LogSettings.Target, environment: [String: String]) -> LogSettings.Target {
        switch target {
        case .journald, .stderr: target
        case .auto:
            JournalAvailability.standardErrorIsJournalStream(environment: environment)
                || JournalAvailability.socketAnswers()
                ? .journald : .stderr
        }
    }

    /// A logger writing to the chosen target; every logger from one output shares its journal
    /// writer, so lines keep their order.
    package func logger(label: String) -> Logger {
        let level = level
        if let writer {
            return Logger(label: label) { _ in JournalLogHandler(level: level, writer: writer) }
        }
        return Logger(label: label) { LogfmtLogHandler(label: $0, level: level) }
    }

    /// Hands the journal the lines still waiting (up to ``finishTimeout``); the rest go to
    /// standard error. Call before the process exits.
    package func finish() {
        writer?.finish(within: Self.finishTimeout)
    }
}
