/// One published verdict, numbered.
///
/// The verdict is held in one shared, immutable box: an event is copied to every subscriber of the
/// hub, and a copy then costs one reference count rather than one for each array and string in the
/// verdict, all of them shared by every subscriber and bounced between the cores that wake them.
package struct ConnectivityEvent: Sendable, Hashable {
    /// Increases by one with every published change, starting at 1 for the initial `unknown` verdict.
    /// A gap between two events a subscriber received means it lagged and skipped the events between.
    package var sequence: UInt64
    package var verdict: Verdict {
        get { storage.verdict }
        set { storage = Storage(newValue) }
    }
    /// Set on the first event of a resumed subscription whose position was no longer in the history
    /// (or came from an earlier run of reachd): what the subscriber knew is void, start over from this.
    package var isReset: Bool
    private var storage: Storage

    package init(sequence: UInt64, verdict: Verdict, isReset: Bool = false) {
        self.sequence = sequence
        self.storage = Storage(verdict)
        self.isReset = isReset
    }

    /// The verdict, shared by every copy of the event.
    private final class Storage: Sendable, Hashable {
        let verdict: Verdict

        init(_ verdict: Verdict) { self.verdict = verdict }

        static func == (lhs: Storage, rhs: Storage) -> Bool { lhs === rhs || lhs.verdict == rhs.verdict }
        func hash(into hasher: inout Hasher) { verdict.hash(into: &hasher) }
    }
}
