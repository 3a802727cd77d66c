import Logging
import ReachSupport

extension CallbackReport {
    /// `info` for a success, `warning` for anything else: a failure, a timeout, a skip.
    var logLevel: Logger.Level { outcome == .succeeded ? .info : .warning }

    /// One line a person can act on, saying what was coalesced or skipped.
    var logMessage: String {
        let head = "\(direction.rawValue) callback \(name): \(outcome.code)"
        switch (outcome, coalesced) {
        case (.skipped, let count):
            return head
                + ": \(count) \(direction.rawValue) transition(s) up to #\(sequence) arrived while its previous run went on, and were undone before it ended"
        case (_, 0):
            return head
        case (_, let count):
            return head
                + " (one run for the latest transition, standing for \(count) earlier one(s) that arrived while the previous run went on)"
        }
    }

    var logMetadata: Logger.Metadata {
        var metadata: Logger.Metadata = [
            "callback": "\(name)",
            "direction": "\(direction.rawValue)",
            "outcome": "\(outcome.code)",
            "duration_ms": "\(duration.milliseconds)",
            "sequence": "\(sequence)",
            "coalesced": "\(coalesced)",
        ]
        if case .failed(let error) = outcome { metadata["error"] = "\(error)" }
        return metadata
    }
}
