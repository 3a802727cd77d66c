/// One published verdict, numbered.
package struct ConnectivityEvent: Sendable, Hashable {
    /// Increases by one with every published change, starting at 1 for the initial `unknown` verdict.
    /// A gap between two events a subscriber received means it lagged and skipped the events between.
    package var sequence: UInt64
    package var verdict: Verdict
    /// Set on the first event of a resumed subscription whose position was no longer in the history
    /// (or came from an earlier run of reachd): what the subscriber knew is void, start over from this.
    package var isReset: Bool

    package init(sequence: UInt64, verdict: Verdict, isReset: Bool = false) {
        self.sequence = sequence
        self.verdict = verdict
        self.isReset = isReset
    }
}
