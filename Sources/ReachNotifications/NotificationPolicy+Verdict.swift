import ReachAPI
import ReachCore
import ReachSupport

extension NotificationPolicy {
    /// A verdict as the policy needs it: the state, what to say about it, and the captive portal.
    package struct Verdict: Sendable, Hashable {
        /// What the notification reflects; `unknown` changes nothing.
        package var state: ConnectivityState
        /// The reason's code (`connection_refused`, `no_link`, `captive_portal`, ...).
        package var reason: String
        /// The failing target, when the reason is a target's failure.
        package var target: String?
        /// The captive portal reachd tells of: the one to sign in to, or a signed-in session's.
        package var portal: Portal?
        /// Where the path breaks (`gateway`, `upstream`, `server`, ...), when disconnected.
        package var fault: String?
        /// The slow notification's body while the quality is impaired (``ConnectivityWording/slowBody(fault:target:measures:)``); `nil` otherwise.
        package var slowBody: String?

        package init(
            state: ConnectivityState,
            reason: String,
            target: String? = nil,
            portal: Portal? = nil,
            fault: String? = nil,
            slowBody: String? = nil
        ) {
            self.state = state
            self.reason = reason
            self.target = target
            self.portal = portal
            self.fault = fault
            self.slowBody = slowBody
        }

        /// A portal holds the connection until the person signs in.
        var needsSignIn: Bool { state == .disconnected && reason == VerdictReason.captivePortal.code }
    }

    /// A captive portal as the desktop needs it: where to sign in, what the person knows the venue
    /// by, and when a signed-in session ends.
    package struct Portal: Sendable, Hashable {
        /// The sign-in page: an `http` or `https` URL, nothing else (the network chooses it, and
        /// another scheme could start any program that claims it).
        package var signInURL: String?
        /// A host name to show: the venue page's, else the sign-in page's.
        package var venue: String?
        /// When the session ends, on the policy's clock.
        package var sessionEndsAt: Instant?
        /// The interface behind the portal (`wlan0`), to say "Wi-Fi".
        package var interface: String?

        package init(
            signInURL: String? = nil,
            venue: String? = nil,
            sessionEndsAt: Instant? = nil,
            interface: String? = nil
        ) {
            self.signInURL = signInURL.flatMap(HTTPURL.openable)
            self.venue = venue
            self.sessionEndsAt = sessionEndsAt
            self.interface = interface
        }
    }
}

extension NotificationPolicy.Verdict {
    /// The verdict a status document describes, received at `now` while the wall clock read
    /// `wallNow`: the session's end, a wall time in the document, becomes an instant of the
    /// policy's clock.
    package init(document: StatusDocument, receivedAt now: Instant, wallNow: WallTime) {
        let portal = document.portal.map { portal in
            NotificationPolicy.Portal(
                signInURL: portal.userPortalURL,
                venue: ConnectivityWording.venue(
                    venueInfoURL: portal.venueInfoURL,
                    userPortalURL: portal.userPortalURL
                ),
                sessionEndsAt: portal.sessionEndsAt.flatMap(RFC3339.wallTime(from:)).map {
                    now.advanced(by: $0.sinceEpoch - wallNow.sinceEpoch)
                },
                interface: portal.interface
            )
        }
        self.init(
            state: ConnectivityState(rawValue: document.state) ?? .unknown,
            reason: document.reason,
            target: document.target,
            portal: portal,
            fault: document.fault,
            slowBody: document.quality.flatMap { quality in
                quality.state == QualityState.impaired.rawValue
                    ? ConnectivityWording.slowBody(
                        fault: quality.fault,
                        target: quality.target,
                        measures: quality.exceeded.map(\.measure)
                    ) : nil
            }
        )
    }
}
