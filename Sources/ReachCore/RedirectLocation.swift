/// Reads the host of a redirect's `Location`, to tell a portal's redirect (to another host) from a
/// server's own (to another path of the same host); the desktop agent names a portal's venue by it.
package enum RedirectLocation {
    /// The host of an absolute `Location` (`http://portal.example:8080/login` → `portal.example`),
    /// brackets of an IPv6 literal removed; `nil` for a relative one, which stays on the same host.
    package static func host(of location: String) -> String? {
        guard let schemeEnd = location.firstRange(of: "://") else {
            // A network-path reference, `//portal.example/login`, names a host too.
            guard location.hasPrefix("//") else { return nil }
            return host(ofAuthorityIn: location.dropFirst(2))
        }
        return host(ofAuthorityIn: location[schemeEnd.upperBound...])
    }

    private static func host(ofAuthorityIn rest: Substring) -> String? {
        var authority = rest.prefix { !"/?#".contains($0) }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        let host = authority.prefix { $0 != ":" }
        return host.isEmpty ? nil : String(host)
    }
}
