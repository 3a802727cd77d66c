/// What a network's captive-portal API (RFC 8908) said about this machine, in the words of the RFC.
///
/// The API is the strongest evidence there is: the network itself says whether this machine is
/// captive. When it says it is not, reachd does not second-guess it from a redirect or a check URL.
package struct CaptivePortalAPIAnswer: Sendable, Hashable {
    /// `captive`: whether the network holds this machine's traffic until someone signs in.
    package var isCaptive: Bool
    /// `user-portal-url`.
    package var userPortalURL: String?
    /// `venue-info-url`.
    package var venueInfoURL: String?
    /// `seconds-remaining`: the session's remaining time.
    package var secondsRemaining: Int?
    /// `bytes-remaining`: the session's remaining data.
    package var bytesRemaining: Int?

    package init(
        isCaptive: Bool,
        userPortalURL: String? = nil,
        venueInfoURL: String? = nil,
        secondsRemaining: Int? = nil,
        bytesRemaining: Int? = nil
    ) {
        self.isCaptive = isCaptive
        self.userPortalURL = userPortalURL
        self.venueInfoURL = venueInfoURL
        self.secondsRemaining = secondsRemaining
        self.bytesRemaining = bytesRemaining
    }
}
