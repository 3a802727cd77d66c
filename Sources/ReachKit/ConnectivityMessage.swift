import ReachAPI
import ReachCore
import ReachSupport

/// What to tell a person about connectivity, in the words the desktop notification uses: the
/// same table (ReachAPI's wording, which `reachctl notify-agent` reads), so that a program's
/// banner says what the desktop says. ``ServiceVerdict/message`` gives the one for a verdict.
public struct ConnectivityMessage: Sendable, Hashable {
    /// "Waiting for connectivity…", "Sign in to the network" or "Connected".
    public var title: String
    /// Whose fault it is and why, such as "The internet connection is down. The server did not
    /// answer in time (target server)."; "Sign in at hotel.example to reach the server."; "The
    /// server can be reached again after 2 min 5 s."
    public var body: String
    /// An icon of the freedesktop Icon Naming Specification: `network-offline`, `network-error`,
    /// `dialog-password`, `network-transmit-receive`.
    public var iconName: String
    /// Where a person signs in to a captive portal (an `http` or `https` URL), when that is what to do.
    public var signInURL: String?

    /// A message from its parts: a program's own words, or what a test expects.
    public init(title: String, body: String, iconName: String, signInURL: String? = nil) {
        self.title = title
        self.body = body
        self.iconName = iconName
        self.signInURL = signInURL
    }

    /// The "Connected" message after an outage of `outage` (`nil`: its length unknown).
    public static func restored(after outage: Duration?) -> ConnectivityMessage {
        ConnectivityMessage(
            title: ConnectivityWording.connectedSummary,
            body: ConnectivityWording.connectedBody(after: outage),
            iconName: ConnectivityWording.connectedIcon
        )
    }
}

extension ServiceVerdict {
    /// What the desktop would say for this verdict: waiting (with whose fault and why), sign in (a
    /// captive portal), or connected; `nil` while the state is `unknown` (the desktop says nothing then).
    public var message: ConnectivityMessage? {
        switch state {
        case .unknown:
            return nil
        case .connected:
            return .restored(after: nil)
        case .disconnected:
            let code = reason.code
            if code == VerdictReason.captivePortal.code {
                let venue = ConnectivityWording.venue(
                    venueInfoURL: portal?.venueInfoURL,
                    userPortalURL: portal?.userPortalURL
                )
                return ConnectivityMessage(
                    title: ConnectivityWording.signInSummary,
                    body: ConnectivityWording.signInBody(venue: venue),
                    iconName: ConnectivityWording.signInIcon,
                    signInURL: portal?.userPortalURL.flatMap(HTTPURL.openable)
                )
            }
            return ConnectivityMessage(
                title: ConnectivityWording.waitingSummary,
                body: ConnectivityWording.waitingBody(reason: code, target: failingTarget, fault: fault?.code),
                iconName: ConnectivityWording.waitingIcon(reason: code)
            )
        }
    }
}
