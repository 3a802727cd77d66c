/// Decides when to warn that a captive portal's session is about to end: once per session, a set
/// time before its end. Pure: the caller passes the time.
///
/// A session is known by its end. An API that extends it moves the end later, which is a new
/// session to warn about; the end wobbling by the API's one-second resolution is not.
public struct PortalSessionWarnings: Sendable {
    /// How long before the end to warn.
    public let lead: Duration
    /// The end last warned about, per interface.
    private var warnedEnds: [String: WallTime] = [:]

    public init(lead: Duration) {
        self.lead = lead
    }

    /// Whether to warn now about the session on `interface` that ends at `end`, and if so, notes
    /// that it was warned about.
    public mutating func shouldWarn(interface: String, sessionEndsAt end: WallTime, now: WallTime) -> Bool {
        guard end.sinceEpoch - now.sinceEpoch <= lead else { return false }
        if let warned = warnedEnds[interface], end.sinceEpoch - warned.sinceEpoch <= .seconds(60) { return false }
        warnedEnds[interface] = end
        return true
    }

    /// How long until the warning about a session ending at `end` is due; `nil` when it is due or past.
    public func untilWarning(sessionEndsAt end: WallTime, now: WallTime) -> Duration? {
        let until = end.sinceEpoch - lead - now.sinceEpoch
        return until > .zero ? until : nil
    }

    /// Forgets `interface`'s session (the network is gone).
    public mutating func forget(interface: String) {
        warnedEnds[interface] = nil
    }
}
