/// Which way connectivity moved.
public enum TransitionDirection: String, Sendable, Hashable, CaseIterable {
    /// `disconnected` → `connected`.
    case restored
    /// `connected` → `disconnected`.
    case lost
}

/// A move between `connected` and `disconnected`, handed to every callback registered for its direction.
///
/// Leaving `unknown` at start-up is not a transition: there was no earlier state to restore or lose.
/// A subscriber that needs the initial state gets it as the first event of ``ConnectivityMonitor/subscribe(resumingAfter:)``.
package struct ConnectivityTransition: Sendable, Hashable {
    package var direction: TransitionDirection
    /// The sequence number of the event that published this transition.
    package var sequence: UInt64
    /// The verdict the transition arrived at.
    package var verdict: Verdict

    package init(direction: TransitionDirection, sequence: UInt64, verdict: Verdict) {
        self.direction = direction
        self.sequence = sequence
        self.verdict = verdict
    }
}

/// Identifies a registered callback, to remove it later.
public struct CallbackID: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt64

    public var description: String { "callback-\(rawValue)" }
}

/// How one run of one callback went, or that transitions owed to it were skipped: reported as an
/// event and logged, so that what the reaction rule (see `ConnectivityMonitor`) coalesced or
/// skipped is never silent.
public struct CallbackReport: Sendable, Hashable {
    public enum Outcome: Sendable, Hashable {
        case succeeded
        /// The callback threw; the error's description.
        case failed(String)
        /// The callback outlived its timeout; it was cancelled and is no longer waited for.
        case timedOut
        /// reachd shut down while the callback ran.
        case cancelled
        /// Nothing ran: ``CallbackReport/coalesced`` transitions of the callback's direction arrived
        /// while its previous run was still going, and by the time that run ended connectivity had
        /// moved back (or the callback was removed, or reachd was stopping). The report's
        /// ``CallbackReport/sequence`` is the last of them.
        case skipped

        /// A stable snake_case name for metrics labels and log fields.
        public var code: String {
            switch self {
            case .succeeded: "ok"
            case .failed: "failed"
            case .timedOut: "timed_out"
            case .cancelled: "cancelled"
            case .skipped: "skipped"
            }
        }
    }

    public var callback: CallbackID
    public var name: String
    public var direction: TransitionDirection
    /// The sequence number of the transition the callback ran for.
    public var sequence: UInt64
    public var outcome: Outcome
    public var duration: Duration
    /// Transitions of the callback's direction that arrived while its previous run was still going
    /// and were folded into this run (which got the latest of them), or, for ``Outcome/skipped``,
    /// that were skipped. 0 when nothing waited.
    public var coalesced: Int

    public init(
        callback: CallbackID,
        name: String,
        direction: TransitionDirection,
        sequence: UInt64,
        outcome: Outcome,
        duration: Duration,
        coalesced: Int = 0
    ) {
        self.callback = callback
        self.name = name
        self.direction = direction
        self.sequence = sequence
        self.outcome = outcome
        self.duration = duration
        self.coalesced = coalesced
    }
}
