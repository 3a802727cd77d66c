import ReachAPI

/// What following reachd's event stream brings (``ReachdClient/follow(backoff:silenceLimit:clock:_:)``):
/// its verdicts, and every break between them, in one sequence, so that a reader that must not
/// trust an old verdict (ReachKit's service, the desktop agent) learns of the gap where it learns
/// of the verdicts.
package enum ReachdUpdate: Sendable {
    /// A verdict event's status document. A `reset` one (``ReachAPI/StatusDocument/reset``) starts
    /// over: every document is a whole verdict, so it simply replaces the one known.
    case verdict(StatusDocument)
    /// The stream broke or could not be had, and why; the next attempt follows after `retryingIn`.
    case disconnected(ReachdClientError, retryingIn: Duration)
}
