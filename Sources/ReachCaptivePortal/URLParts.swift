import ReachCore

/// The pieces of an http(s) URL a request needs: scheme, host, port, and the path with its query.
struct URLParts: Sendable, Hashable {
    var isHTTPS: Bool
    /// Without the brackets of an IPv6 literal.
    var host: String
    var port: Int
    /// The request target: the path and query, `/` when the URL has none; never the fragment.
    var path: String

    init?(_ url: String) {
        let lower = url.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            (isHTTPS, rest) = (true, url.dropFirst(8))
        } else if lower.hasPrefix("http://") {
            (isHTTPS, rest) = (false, url.dropFirst(7))
        } else {
            return nil
        }
        let authority = rest.prefix { !"/?#".contains($0) }
        var target = rest[authority.endIndex...]
        if let fragment = target.firstIndex(of: "#") { target = target[..<fragment] }
        path = target.isEmpty ? "/" : (target.first == "?" ? "/" + String(target) : String(target))
        let (host, portText) = HostPort.split(authority)
        guard !authority.contains("@"), !host.isEmpty else { return nil }
        guard let port = portText.map({ Int($0) }) ?? (isHTTPS ? 443 : 80), (1...65535).contains(port) else { return nil }
        (self.host, self.port) = (String(host), port)
    }

    /// The `Host` header's value: the port only when it is not the scheme's.
    var hostHeader: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == (isHTTPS ? 443 : 80) ? bracketed : "\(bracketed):\(port)"
    }
}
