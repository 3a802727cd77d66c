import ReachCore

/// Decides what the desktop notification shows and when, from reachd's verdicts and what the
/// notification server reports: pure and driven by the instants it is given, so every rule can be
/// tested with a test clock; the bus and the event stream are adapters around it.
///
/// The rules:
/// - **One notification.** Every post replaces the last one the server gave an id for.
/// - **Waiting** (persistent, with a "Check now" action) while disconnected, its body the reason
///   in words; replaced by a brief, transient **Connected** once restored. Connected alone (at
///   start, or after an outage the person never saw) shows nothing; `unknown` changes nothing.
/// - **Rate limit.** At most one post per ``Settings/minInterval``: the first change after a quiet
///   spell is shown at once; later ones wait for the window to end, and then only the latest state
///   is shown. The final state is always shown.
/// - **The person decides.** A waiting notification the person dismissed (or the server expired)
///   stays away until the state changes. "Check now" asks for ``Effect/checkNow``; if the server
///   took the notification away on the click, it comes back when the check has answered.
/// - **Servers come and go.** When the bus (re)connects or a server (re)starts, whatever it showed
///   is gone: the current waiting notification is posted again at once. A failed post is retried
///   when the window ends.
public struct NotificationPolicy<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The two knobs a person may want to turn (`--min-interval`, `--connected-for`).
    public struct Settings: Sendable, Hashable {
        /// The shortest time between two posts.
        public var minInterval: Duration
        /// How long "Connected" stays.
        public var connectedFor: Duration

        public init(minInterval: Duration = .seconds(10), connectedFor: Duration = .seconds(5)) {
            self.minInterval = minInterval
            self.connectedFor = connectedFor
        }
    }

    /// What the adapter must do.
    public enum Effect: Sendable, Hashable {
        /// Post this notification in place of notification `replacing` (0: a new one), then report
        /// ``posted(id:at:)`` or ``postFailed(at:)``.
        case post(DesktopNotification, replacing: UInt32)
        /// `POST /v1/check`, then report ``checkFinished(at:)``.
        case checkNow
    }

    /// A verdict as the policy needs it: the state, and what to say about it.
    public struct Verdict: Sendable, Hashable {
        /// What the notification reflects; `unknown` changes nothing.
        public var state: ConnectivityState
        /// The reason's code (`connection_refused`, `no_link`, ...).
        public var reason: String
        /// The failing target, when the reason is a target's failure.
        public var target: String?

        public init(state: ConnectivityState, reason: String, target: String? = nil) {
            self.state = state
            self.reason = reason
            self.target = target
        }
    }

    /// The action key of "Check now".
    public static var checkNowAction: String { "check-now" }

    private enum Presentation: Hashable {
        case waiting(body: String, icon: String)
        case connected(body: String)
    }

    /// The settings it was made with.
    public let settings: Settings
    /// What should be on screen; nil: nothing (more) to show.
    private var wanted: Presentation?
    /// What the server shows as far as we know, and its id (0: none).
    private var shown: Presentation?
    private var shownID: UInt32 = 0
    /// A post is on its way; ``posted(id:at:)`` or ``postFailed(at:)`` comes next.
    private var inFlight: Presentation?
    private var lastPostAt: Instant?
    private var busReady = false
    /// The waiting notification of this outage was posted, so its end is worth a "Connected".
    private var outageShown = false
    private var outageStart: Instant?
    /// The person (or the server) took the waiting notification away: stay quiet until the state changes.
    private var quiet = false
    private var checking = false

    /// A policy with nothing shown yet and no bus ready.
    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    // MARK: Inputs

    /// A verdict from reachd (the first one, a change, or a reset's fresh start).
    public mutating func verdict(_ verdict: Verdict, at now: Instant) -> [Effect] {
        switch verdict.state {
        case .unknown:
            return []
        case .disconnected:
            if case .waiting? = wanted {} else {
                quiet = false
                // A waiting notification still on screen (its "Connected" was deferred) carries on.
                if case .waiting? = shown {} else {
                    outageShown = false
                    outageStart = now
                }
            }
            wanted = .waiting(body: ConnectivityWording.waitingBody(reason: verdict.reason, target: verdict.target), icon: ConnectivityWording.waitingIcon(reason: verdict.reason))
        case .connected:
            guard case .waiting? = wanted else { return [] }
            let outage = outageStart.map { $0.duration(to: now) }
            wanted = outageShown ? .connected(body: ConnectivityWording.connectedBody(after: outage)) : nil
            quiet = false
        }
        return flush(at: now)
    }

    /// Time passed: call at ``nextDeadline``.
    public mutating func tick(at now: Instant) -> [Effect] {
        flush(at: now)
    }

    /// The server accepted the post and gave it `id`.
    public mutating func posted(id: UInt32, at now: Instant) -> [Effect] {
        shown = inFlight
        shownID = id
        inFlight = nil
        // The brief "Connected" is done once posted: nothing more to show for this outage.
        if case .connected? = shown, shown == wanted { wanted = nil }
        return flush(at: now)
    }

    /// The post failed (no server, a timeout): retried when the window ends.
    public mutating func postFailed(at now: Instant) -> [Effect] {
        inFlight = nil
        shown = nil
        shownID = 0
        return []
    }

    /// Connected to the bus and listening (again), or a notification server (re)started: what was
    /// shown is gone; the waiting notification comes back at once.
    public mutating func serverReady(at now: Instant) -> [Effect] {
        busReady = true
        forgetShown()
        lastPostAt = nil
        return flush(at: now)
    }

    /// The server left the bus (its notifications with it), or the bus connection was lost.
    public mutating func serverGone(busLost: Bool, at now: Instant) -> [Effect] {
        if busLost { busReady = false }
        forgetShown()
        return []
    }

    /// The server says notification `id` went away.
    public mutating func closed(id: UInt32, at now: Instant) -> [Effect] {
        guard id != 0, id == shownID else { return [] }
        let wasWaiting = if case .waiting? = shown { true } else { false }
        forgetShown()
        if wasWaiting, !checking { quiet = true }
        return []
    }

    /// The person invoked `action` on notification `id`.
    public mutating func actionInvoked(id: UInt32, action: String, at now: Instant) -> [Effect] {
        guard id != 0, id == shownID, action == Self.checkNowAction, !checking, case .waiting? = shown else { return [] }
        checking = true
        return [.checkNow]
    }

    /// The check asked for by ``Effect/checkNow`` answered (or failed): if the server took the
    /// waiting notification away on the click, it comes back now, outside the rate limit (the
    /// person asked).
    public mutating func checkFinished(at now: Instant) -> [Effect] {
        checking = false
        if case .waiting? = wanted, shown == nil, !quiet { lastPostAt = nil }
        return flush(at: now)
    }

    // MARK: Decisions

    /// When ``tick(at:)`` must be called, if something waits for the window to end.
    public var nextDeadline: Instant? {
        guard needsPost, let lastPostAt else { return nil }
        return lastPostAt.advanced(by: settings.minInterval)
    }

    /// The id of the notification on screen, 0 when none.
    public var notificationID: UInt32 { shownID }

    private var needsPost: Bool {
        guard busReady, inFlight == nil, let wanted, wanted != shown else { return false }
        if case .waiting = wanted, quiet { return false }
        return true
    }

    private mutating func flush(at now: Instant) -> [Effect] {
        guard needsPost, let wanted else { return [] }
        if let lastPostAt, now < lastPostAt.advanced(by: settings.minInterval) { return [] }
        lastPostAt = now
        inFlight = wanted
        if case .waiting = wanted { outageShown = true }
        return [.post(notification(wanted), replacing: shownID)]
    }

    private mutating func forgetShown() {
        shown = nil
        shownID = 0
    }

    private func notification(_ presentation: Presentation) -> DesktopNotification {
        switch presentation {
        case .waiting(let body, let icon):
            DesktopNotification(
                icon: icon, summary: ConnectivityWording.waitingSummary, body: body,
                actions: [.init(key: Self.checkNowAction, label: "Check now")],
                urgency: .normal, category: "network.disconnected", resident: true, expiry: .never)
        case .connected(let body):
            DesktopNotification(
                icon: ConnectivityWording.connectedIcon, summary: ConnectivityWording.connectedSummary, body: body,
                urgency: .normal, category: "network.connected", transient: true, expiry: .after(settings.connectedFor))
        }
    }
}
