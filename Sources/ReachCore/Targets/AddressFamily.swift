/// Which IP family a probe may connect over.
package enum AddressFamily: String, Sendable, Hashable, CaseIterable {
    /// Both, whichever answers first (Happy Eyeballs). The default: right on IPv4-only,
    /// IPv6-only and dual-stack hosts alike.
    case auto
    case ipv4
    case ipv6
}
