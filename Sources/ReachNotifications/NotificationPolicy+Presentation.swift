import ReachAPI

extension NotificationPolicy {
    /// The notification that says `presentation` at `now`, in ``ConnectivityWording``'s words.
    func notification(_ presentation: Presentation, at now: Instant) -> DesktopNotification {
        let checkNow = DesktopNotification.Action(key: Self.checkNowAction, label: ConnectivityWording.checkNowLabel)
        switch presentation {
        case .waiting(let body, let icon):
            return DesktopNotification(
                icon: icon,
                summary: ConnectivityWording.waitingSummary,
                body: body,
                actions: [checkNow],
                urgency: .normal,
                category: "network.disconnected",
                resident: true,
                expiry: .never
            )
        case .signIn(let body, let url):
            return DesktopNotification(
                icon: ConnectivityWording.signInIcon,
                summary: ConnectivityWording.signInSummary,
                body: body,
                actions: (url == nil ? [] : Self.openSignInActions) + [checkNow],
                urgency: .normal,
                category: "network.disconnected",
                resident: true,
                expiry: .never
            )
        case .connected(let body):
            return DesktopNotification(
                icon: ConnectivityWording.connectedIcon,
                summary: ConnectivityWording.connectedSummary,
                body: body,
                urgency: .normal,
                category: "network.connected",
                transient: true,
                expiry: .after(settings.connectedFor)
            )
        case .slow(let body):
            return DesktopNotification(
                icon: ConnectivityWording.slowIcon,
                summary: ConnectivityWording.slowSummary,
                body: body,
                urgency: .low,
                category: "network",
                expiry: .never
            )
        case .sessionEnding(let end):
            // Gone by itself when the session ends, if the policy has not taken it away first.
            let remaining = now.duration(to: end)
            return DesktopNotification(
                icon: ConnectivityWording.sessionEndingIcon,
                summary: ConnectivityWording.sessionEndingSummary(remaining: remaining, interface: session?.interface),
                body: ConnectivityWording.sessionEndingBody(venue: session?.venue),
                actions: session?.signInURL == nil ? [] : Self.openSignInActions,
                urgency: .normal,
                category: "network",
                expiry: .after(max(remaining, .milliseconds(1)))
            )
        }
    }

    /// "Open sign-in page" twice: as the click on the notification (`default`, which servers do
    /// not draw as a button) and as a button.
    private static var openSignInActions: [DesktopNotification.Action] {
        [
            .init(key: "default", label: ConnectivityWording.openSignInLabel),
            .init(key: openSignInAction, label: ConnectivityWording.openSignInLabel),
        ]
    }
}
