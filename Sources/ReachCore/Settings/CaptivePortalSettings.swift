/// How reachd looks for a captive portal (the `captive_portal` section).
///
/// The network's own RFC 8908 API is always asked when the network advertises one; the check URL
/// is off by default, so that the shipped configuration never contacts a host the administrator
/// did not name.
public struct CaptivePortalSettings: Sendable, Hashable {
    /// The check URL's probe; `nil` when none is configured.
    package var check: PortalCheck?
    /// The RFC 8908 API's URI set by hand, used on every usable interface, in place of what the network advertises.
    package var apiURL: String?
    /// Where systemd-networkd keeps each link's state, one file per interface index, with the
    /// API's URI as `CAPTIVE_PORTAL=` (learned from DHCPv4 option 114, DHCPv6 option 103 or a router advertisement).
    package var networkdStateDirectory: String
    /// Extra CAs to trust for the API's HTTPS (a private CA); `nil` trusts the system store.
    package var caFile: String?
    /// How long before the portal's session ends the journal warns (when the API tells `seconds-remaining`).
    package var sessionWarning: Duration

    package static let defaultNetworkdStateDirectory = "/run/systemd/netif/links"

    package init(
        check: PortalCheck? = nil,
        apiURL: String? = nil,
        networkdStateDirectory: String = defaultNetworkdStateDirectory,
        caFile: String? = nil,
        sessionWarning: Duration = .seconds(300)
    ) {
        self.check = check
        self.apiURL = apiURL
        self.networkdStateDirectory = networkdStateDirectory
        self.caFile = caFile
        self.sessionWarning = sessionWarning
    }

    /// These settings but the check URL, which a reload applies live.
    package var withoutCheck: CaptivePortalSettings {
        var settings = self
        settings.check = nil
        return settings
    }
}
