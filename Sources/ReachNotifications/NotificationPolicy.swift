import ReachAPI
import ReachCore

/// Decides what the desktop notification shows and when, from reachd's verdicts and what the
/// notification server reports: pure and driven by the instants it is given, so every rule can be
/// tested with a test clock; the bus, the event stream and the browser are adapters around it.
///
/// The rules:
/// - **One notification.** Every post replaces the last one the server gave an id for.
/// - **Waiting** (persistent, with a "Check now" action) while disconnected, its body whose fault
///   it is ("Your router is not answering") and the reason in words; **Sign in to the network** instead while a captive portal holds the connection,
///   with "Open sign-in page" (``Effect/open(_:)``) when the sign-in URL is known. Replaced by a
///   brief, transient **Connected** once restored. Connected alone (at start, or after an outage
///   the person never saw) shows nothing; `unknown` changes nothing.
/// - **The screen never contradicts reachd.** On restoration the waiting (or sign-in)
///   notification is replaced in place at once; a "Connected" (or session warning) still on screen
///   when reachd says disconnected again is withdrawn at once.
/// - **Rate limit on pop-ups.** Apart from those, at most one post per ``Settings/minInterval``:
///   the first change after a quiet spell is shown at once; later ones wait for the window to end,
///   and then only the latest state is shown. The final state is always shown.
/// - **Slow, if asked.** With ``Settings/notifySlow``, "Your connection is slow" while connected
///   with an impaired quality (where and how, without values), after any "Connected" or session
///   warning, withdrawn when the quality is good again; dismissed, it stays away until then.
/// - **A session's end, once.** With a portal session's end known, one warning
///   ``Settings/portalWarning`` before it ("Wi-Fi session ends in 5 minutes"); a session end that
///   moves later by more than a minute is a new session. The warning goes when the session ends.
/// - **The person decides.** A waiting notification the person dismissed (or the server expired)
///   stays away until the state changes. "Check now" asks for ``Effect/checkNow``; if the server
///   took the notification away on the click, it comes back when the check has answered.
/// - **Servers come and go.** When the bus (re)connects or a server (re)starts, whatever it showed
///   is gone: the current waiting notification is posted again at once. A failed post is retried
///   when the window ends.
package struct NotificationPolicy<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The knobs a person may want to turn (`--min-interval`, `--connected-for`, `--portal-warning`).
    package struct Settings: Sendable, Hashable {
        /// The shortest time between two pop-ups.
        package var minInterval: Duration
        /// How long "Connected" stays.
        package var connectedFor: Duration
        /// How long before a portal session ends the person is told.
        package var portalWarning: Duration
        /// Whether "Your connection is slow" is shown while the verdict's quality is impaired: off
        /// by default (`--notify-slow`, or `REACHD_NOTIFY_SLOW=1`).
        package var notifySlow: Bool

        package init(
            minInterval: Duration = .seconds(10),
            connectedFor: Duration = .seconds(5),
            portalWarning: Duration = .seconds(300),
            notifySlow: Bool = false
        ) {
            self.minInterval = minInterval
            self.connectedFor = connectedFor
            self.portalWarning = portalWarning
            self.notifySlow = notifySlow
        }
    }

    /// What the adapter must do.
    package enum Effect: Sendable, Hashable {
        /// Post this notification in place of notification `replacing` (0: a new one), then report
        /// ``posted(id:at:)`` or ``postFailed(at:)``.
        case post(DesktopNotification, replacing: UInt32)
        /// Take notification `id` away (`CloseNotification`): it no longer tells the truth.
        case close(UInt32)
        /// `POST /v1/check`, then report ``checkFinished(at:)``.
        case checkNow
        /// Open this page (a captive portal's sign-in page) in the person's browser.
        case open(String)
    }

    /// The action key of "Check now".
    package static var checkNowAction: String { "check-now" }
    /// The action key of "Open sign-in page" (clicking the notification, `default`, does the same).
    package static var openSignInAction: String { "open-sign-in" }

    /// What a notification says, before it is worded.
    enum Presentation: Hashable {
        case waiting(body: String, icon: String)
        case signIn(body: String, url: String?)
        case connected(body: String)
        /// The warning for the session ending at `endsAt`.
        case sessionEnding(endsAt: Instant)
        /// Connected, but the quality is impaired (``Settings/notifySlow``).
        case slow(body: String)

        /// Whether it tells the person that reachd cannot reach the server.
        var saysDisconnected: Bool {
            switch self {
            case .waiting, .signIn: true
            case .connected, .sessionEnding, .slow: false
            }
        }
    }

    /// The settings it was made with.
    package let settings: Settings
    /// What reachd's state asks for: an outage's notification, or its pending "Connected"; nil: nothing.
    private var wanted: Presentation?
    /// The portal's session: what the warning says and when.
    private(set) var session: Portal?
    /// Which session was warned of. One session, the verdict's: it goes by no interface.
    private var sessionWarnings: PortalSessionWarnings<Instant>
    /// What the server shows as far as we know, and its id (0: none).
    private var shown: Presentation?
    private var shownID: UInt32 = 0
    /// A post is on its way; ``posted(id:at:)`` or ``postFailed(at:)`` comes next.
    private var inFlight: Presentation?
    private var lastPostAt: Instant?
    /// A post waits for the window to end then.
    private var deferredUntil: Instant?
    /// When the policy last looked at the time: deadlines before it have been seen.
    private var evaluatedAt: Instant?
    private var busReady = false
    /// The waiting notification of this outage was posted, so its end is worth a "Connected".
    private var outageShown = false
    private var outageStart: Instant?
    /// The person (or the server) took the waiting notification away: stay quiet until the state changes.
    private var quiet = false
    private var checking = false
    /// What the quality asks for while connected: "Your connection is slow", or nothing.
    private var slow: Presentation?
    /// The person took the slow notification away: quiet until the quality is good again.
    private var slowDismissed = false

    /// A policy with nothing shown yet and no bus ready.
    package init(settings: Settings = Settings()) {
        self.settings = settings
        sessionWarnings = PortalSessionWarnings(lead: settings.portalWarning)
    }

    // MARK: Inputs

    /// A verdict from reachd (the first one, a change, or a reset's fresh start).
    package mutating func verdict(_ verdict: Verdict, at now: Instant) -> [Effect] {
        switch verdict.state {
        case .unknown:
            return []
        case .disconnected:
            if wanted?.saysDisconnected != true {
                quiet = false
                // A waiting notification still on screen (its "Connected" was deferred) carries on.
                if shown?.saysDisconnected != true {
                    outageShown = false
                    outageStart = now
                }
            }
            wanted =
                verdict.needsSignIn
                ? .signIn(
                    body: ConnectivityWording.signInBody(venue: verdict.portal?.venue),
                    url: verdict.portal?.signInURL
                )
                : .waiting(
                    body: ConnectivityWording.waitingBody(
                        reason: verdict.reason,
                        target: verdict.target,
                        fault: verdict.fault
                    ),
                    icon: ConnectivityWording.waitingIcon(reason: verdict.reason)
                )
        case .connected:
            if wanted?.saysDisconnected == true {
                let outage = outageStart.map { $0.duration(to: now) }
                wanted = outageShown ? .connected(body: ConnectivityWording.connectedBody(after: outage)) : nil
                quiet = false
            }
        }
        session = verdict.portal?.sessionEndsAt == nil ? nil : verdict.portal
        if let body = verdict.slowBody, verdict.state == .connected, settings.notifySlow {
            slow = slowDismissed ? nil : .slow(body: body)
        } else {
            (slow, slowDismissed) = (nil, false)
        }
        return flush(at: now)
    }

    /// Time passed: call at ``nextDeadline``.
    package mutating func tick(at now: Instant) -> [Effect] {
        flush(at: now)
    }

    /// The server accepted the post and gave it `id`.
    package mutating func posted(id: UInt32, at now: Instant) -> [Effect] {
        shown = inFlight
        shownID = id
        inFlight = nil
        switch shown {
        case .connected? where shown == wanted:
            // The brief "Connected" is done once posted: nothing more to show for this outage.
            wanted = nil
        case .sessionEnding(let end)?:
            sessionWarnings.warned(interface: "", sessionEndsAt: end)
            // The warning says the connection works; a pending "Connected" would only hide it.
            if case .connected? = wanted { wanted = nil }
        default:
            break
        }
        return flush(at: now)
    }

    /// The post failed (no server, a timeout): retried when the window ends.
    package mutating func postFailed(at now: Instant) -> [Effect] {
        inFlight = nil
        forgetShown()
        lastPostAt = now
        deferredUntil = now.advanced(by: settings.minInterval)
        return []
    }

    /// Connected to the bus and listening (again), or a notification server (re)started: what was
    /// shown is gone; the waiting notification comes back at once.
    package mutating func serverReady(at now: Instant) -> [Effect] {
        busReady = true
        forgetShown()
        lastPostAt = nil
        return flush(at: now)
    }

    /// The server left the bus (its notifications with it), or the bus connection was lost.
    package mutating func serverGone(busLost: Bool, at now: Instant) -> [Effect] {
        if busLost { busReady = false }
        forgetShown()
        return []
    }

    /// The server says notification `id` went away.
    package mutating func closed(id: UInt32, at now: Instant) -> [Effect] {
        guard id != 0, id == shownID else { return [] }
        let wasOutage = shown?.saysDisconnected == true
        if case .slow? = shown { (slow, slowDismissed) = (nil, true) }
        forgetShown()
        if wasOutage, !checking { quiet = true }
        return []
    }

    /// The person invoked `action` on notification `id`.
    package mutating func actionInvoked(id: UInt32, action: String, at now: Instant) -> [Effect] {
        guard id != 0, id == shownID, let shown else { return [] }
        switch action {
        case Self.checkNowAction:
            guard shown.saysDisconnected, !checking else { return [] }
            checking = true
            return [.checkNow]
        case Self.openSignInAction, "default":
            guard let url = signInURL(of: shown) else { return [] }
            return [.open(url)]
        default:
            return []
        }
    }

    /// The check asked for by ``Effect/checkNow`` answered (or failed): if the server took the
    /// waiting notification away on the click, it comes back now, outside the rate limit (the
    /// person asked).
    package mutating func checkFinished(at now: Instant) -> [Effect] {
        checking = false
        if wanted?.saysDisconnected == true, shown == nil, !quiet { lastPostAt = nil }
        return flush(at: now)
    }

    // MARK: Decisions

    /// When ``tick(at:)`` must be called: the end of the window a post waits for, or the start or
    /// end of a session's warning.
    package var nextDeadline: Instant? {
        var deadlines = [deferredUntil]
        if let end = session?.sessionEndsAt, let evaluatedAt {
            deadlines += [end.advanced(by: .zero - settings.portalWarning), end].filter { $0 > evaluatedAt }
        }
        return deadlines.compactMap { $0 }.min()
    }

    /// The id of the notification on screen, 0 when none.
    package var notificationID: UInt32 { shownID }

    /// What the screen should show now: an outage's notification, else a session's warning when
    /// due, else a pending "Connected".
    private func presentation(at now: Instant) -> Presentation? {
        if let wanted, wanted.saysDisconnected { return wanted }
        return sessionWarning(at: now) ?? wanted ?? slow
    }

    /// The warning for the current session, from ``Settings/portalWarning`` before its end to the
    /// end; once per session, so nothing new once warned (the warning shown stays).
    private func sessionWarning(at now: Instant) -> Presentation? {
        guard let end = session?.sessionEndsAt, now < end, now.duration(to: end) <= settings.portalWarning else {
            return nil
        }
        if sessionWarnings.isDue(interface: "", sessionEndsAt: end, now: now) { return .sessionEnding(endsAt: end) }
        // Warned of: the warning on screen (always the last session's) stays.
        if case .sessionEnding? = shown { return shown }
        return nil
    }

    private mutating func flush(at now: Instant) -> [Effect] {
        evaluatedAt = now
        deferredUntil = nil
        guard busReady, inFlight == nil else { return [] }
        let target = presentation(at: now)
        guard target != shown else { return [] }
        guard let target, !(quiet && target.saysDisconnected) else {
            // Nothing to show: a "Connected" fades by itself; anything else no longer tells the truth.
            if case .connected? = shown { return [] }
            return withdraw()
        }
        let windowEnd = lastPostAt?.advanced(by: settings.minInterval)
        if windowEnd.map({ now >= $0 }) ?? true {
            lastPostAt = now
            return post(target, at: now)
        }
        deferredUntil = windowEnd
        // Inside the window, only what keeps the screen from contradicting reachd happens now.
        guard let shown, shown.saysDisconnected != target.saysDisconnected else { return [] }
        // Restored: the news replaces the waiting notification in place; no new pop-up.
        if shown.saysDisconnected { return post(target, at: now) }
        // Disconnected again: "Connected" goes; the waiting notification pops up when the window ends.
        return withdraw()
    }

    private mutating func post(_ presentation: Presentation, at now: Instant) -> [Effect] {
        deferredUntil = nil
        inFlight = presentation
        if presentation.saysDisconnected { outageShown = true }
        return [.post(notification(presentation, at: now), replacing: shownID)]
    }

    private mutating func withdraw() -> [Effect] {
        let id = shownID
        forgetShown()
        return id == 0 ? [] : [.close(id)]
    }

    private mutating func forgetShown() {
        shown = nil
        shownID = 0
    }

    private func signInURL(of presentation: Presentation) -> String? {
        switch presentation {
        case .signIn(_, let url): url
        case .sessionEnding: session?.signInURL
        case .waiting, .connected, .slow: nil
        }
    }
}
