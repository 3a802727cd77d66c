import ReachSupport

/// A captive portal between this machine and its server: the network answers in the server's
/// place until a person signs in (a hotel's or an airport's Wi-Fi).
///
/// Behind one (``isCaptive``) the verdict is `disconnected` with reason `captive_portal`: a portal's
/// login page can answer a health check with HTTP 200, and saying `connected` then would be the one
/// lie reachd must never tell. Once signed in, a network with an RFC 8908 API still has a portal,
/// no longer captive, whose session may end: the verdict follows the targets, and the portal says
/// when the session ends.
public struct CaptivePortal: Sendable, Hashable {
    /// How reachd learned of the portal, strongest evidence first.
    public enum Evidence: String, Sendable, Hashable, CaseIterable {
        /// The network's RFC 8908 API said `captive: true`.
        case rfc8908
        /// A target's plain-HTTP probe was redirected to another host.
        case redirect
        /// The configured check URL did not answer as expected.
        case checkURL = "check_url"
        /// While the check URL is intercepted, an HTTPS target's certificate failed verification:
        /// the portal, not the server, answered the handshake.
        case tlsIntercepted = "tls_intercepted"
    }

    public var evidence: Evidence
    /// Whether the portal holds the traffic now; `false` only for a signed-in session the API tells of.
    public var isCaptive: Bool
    /// Where a person signs in: the API's `user-portal-url`, a redirect's `Location`, or the
    /// intercepted check URL; `nil` when unknown.
    public var userPortalURL: String?
    /// The API's `venue-info-url`: a page about the venue.
    public var venueInfoURL: String?
    /// The API's `seconds-remaining` when it last answered.
    public var secondsRemaining: Int?
    /// The API's `bytes-remaining` when it last answered.
    public var bytesRemaining: Int?
    /// When the session ends: when the API last answered plus `seconds-remaining`.
    public var sessionEndsAt: WallTime?
    /// The interface the evidence came from, when it came from one (the API is per interface).
    public var interface: String?

    public init(
        evidence: Evidence,
        isCaptive: Bool = true,
        userPortalURL: String? = nil,
        venueInfoURL: String? = nil,
        secondsRemaining: Int? = nil,
        bytesRemaining: Int? = nil,
        sessionEndsAt: WallTime? = nil,
        interface: String? = nil
    ) {
        self.evidence = evidence
        self.isCaptive = isCaptive
        self.sessionEndsAt = sessionEndsAt
        self.userPortalURL = userPortalURL
        self.venueInfoURL = venueInfoURL
        self.secondsRemaining = secondsRemaining
        self.bytesRemaining = bytesRemaining
        self.interface = interface
    }

    /// Whether `other` says something different to a person: captive or not, another sign-in
    /// page, evidence or interface, or a session end moved (extended) by more than a few seconds.
    /// The remaining time and bytes count down with every answer of the API; publishing each would
    /// make an event a second behind a portal.
    func differsInMeaning(from other: CaptivePortal?) -> Bool {
        guard let other else { return true }
        let endMoved: Bool =
            switch (sessionEndsAt, other.sessionEndsAt) {
            case (nil, nil): false
            case (let end?, let otherEnd?):
                !(Duration.seconds(-5)...Duration.seconds(5)).contains(end.sinceEpoch - otherEnd.sinceEpoch)
            default: true
            }
        return isCaptive != other.isCaptive || evidence != other.evidence || userPortalURL != other.userPortalURL
            || venueInfoURL != other.venueInfoURL || interface != other.interface || endMoved
    }
}
