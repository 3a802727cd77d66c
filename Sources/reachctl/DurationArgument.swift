import ArgumentParser
import ReachSupport

/// A duration on the command line: as the configuration writes it (`30s`, `500ms`, `2m`, `1h`,
/// `1m30s`, in any case), or a bare number of seconds; up to a year.
struct DurationArgument: ExpressibleByArgument, Sendable, CustomStringConvertible {
    let duration: Duration
    let description: String
    static let longest: Duration = .seconds(365 * 24 * 3600)

    init?(argument: String) {
        let text = argument.trimmingWhitespace.lowercased()
        let parsed: Duration?
        if let seconds = Double(text) {
            // Checked before converting: past a year (or infinite) it could overflow.
            parsed = seconds >= 0 && seconds <= Double(Self.longest.components.seconds) ? .seconds(seconds) : nil
        } else {
            parsed = DurationText.parse(text)
        }
        guard let parsed, parsed <= Self.longest else { return nil }
        duration = parsed
        description = argument
    }
}
