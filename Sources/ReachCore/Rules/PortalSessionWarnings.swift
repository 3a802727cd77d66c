/// Decides when to warn that a captive portal's session is about to end: once per session, a set
/// time before its end. Pure: the caller passes the time, of the clock it keeps (the daemon's
/// journal warning takes wall time; the desktop agent's notification, its monotonic clock).
///
/// A session is known by its end. An API that extends it moves the end later, which is a new
/// session to warn about; the end wobbling by the API's one-second resolution is not.
package struct PortalSessionWarnings<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// How long before the end to warn.
    package let lead: Duration
    /// The end last warned about, per interface.
    private var warnedEnds: [String: Instant] = [:]

    package init(lead: Duration) {
        self.lead = lead
    }

    /// Whether to warn now about the session on `interface` that ends at `end`, and if so, notes
    /// that it was warned about.
    package mutating func shouldWarn(interface: String, sessionEndsAt end: Instant, now: Instant) -> Bool {
        guard isDue(interface: interface, sessionEndsAt: end, now: now) else { return false }
        warned(interface: interface, sessionEndsAt: end)
        return true
    }

    /// Whether the session on `interface` that ends at `end` is within the lead at `now` and not
    /// warned about yet. Asking notes nothing: see ``warned(interface:sessionEndsAt:)``.
    package func isDue(interface: String, sessionEndsAt end: Instant, now: Instant) -> Bool {
        guard now.duration(to: end) <= lead else { return false }
        if let warned = warnedEnds[interface], warned.duration(to: end) <= .seconds(60) { return false }
        return true
    }

    /// Notes that the session on `interface` that ends at `end` was warned about (a warning
    /// that is shown only once it is posted is noted then).
    package mutating func warned(interface: String, sessionEndsAt end: Instant) {
        warnedEnds[interface] = end
    }

    /// How long until the warning about a session ending at `end` is due; `nil` when it is due or past.
    package func untilWarning(sessionEndsAt end: Instant, now: Instant) -> Duration? {
        let until = now.duration(to: end) - lead
        return until > .zero ? until : nil
    }

    /// Forgets `interface`'s session (the network is gone).
    package mutating func forget(interface: String) {
        warnedEnds[interface] = nil
    }
}
