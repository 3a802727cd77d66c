/// An `http` or `https` URL read into the parts reachd uses: the host and port to connect to, the
/// request target, and where a redirect's `Location` points. The one URL reader of the probes, the
/// portal logic, the captive-portal API client and the desktop wording.
///
/// Pure and small on purpose: Foundation's `URLComponents` would map ICU's IDNA code (over a MiB)
/// into every process that reads a URL, and the core takes no Foundation. It reads; it does not
/// validate characters or decode escapes (the configuration does that with `URLComponents`).
package struct HTTPURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL as written (or as resolved, for ``resolving(_:)``).
    package var text: String
    package var isHTTPS: Bool
    /// What precedes `@` in the authority. Kept, not refused: a caller that sends requests refuses
    /// it (credentials would show in logs); one that only reads the host skips it.
    package var userinfo: String?
    /// Without the brackets of an IPv6 literal; never empty.
    package var host: String
    /// The port written, else the scheme's (80 or 443).
    package var port: Int
    /// The path, `/` when the URL has none.
    package var path: String
    /// After `?`, without it.
    package var query: String?
    /// After `#`, without it; never sent.
    package var fragment: String?

    /// Reads `text`; `nil` when it is not an absolute http(s) URL with a host and a port in 1-65535.
    package init?(_ text: String) {
        let lower = text.prefix(8).lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            (isHTTPS, rest) = (true, text.dropFirst(8))
        } else if lower.hasPrefix("http://") {
            (isHTTPS, rest) = (false, text.dropFirst(7))
        } else {
            return nil
        }
        var authority = rest.prefix { !"/?#".contains($0) }
        if let at = authority.lastIndex(of: "@") {
            userinfo = String(authority[..<at])
            authority = authority[authority.index(after: at)...]
        }
        let (host, portText) = HostPort.split(authority)
        // An IPv6 literal only in brackets, and nothing of the brackets left in the host.
        guard !host.isEmpty, !host.contains("["), !host.contains("]"), authority.hasPrefix("[") || !host.contains(":")
        else { return nil }
        if let portText, !portText.isEmpty {
            guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(portText),
                (1...65535).contains(port)
            else { return nil }
            self.port = port
        } else {
            port = isHTTPS ? 443 : 80
        }
        self.host = String(host)
        var target = rest[authority.endIndex...]
        if let hash = target.firstIndex(of: "#") {
            fragment = String(target[target.index(after: hash)...])
            target = target[..<hash]
        }
        if let question = target.firstIndex(of: "?") {
            query = String(target[target.index(after: question)...])
            target = target[..<question]
        }
        path = target.isEmpty ? "/" : String(target)
        self.text = text
    }

    package var description: String { text }

    /// What a request line carries: the path and query; never the fragment.
    package var requestTarget: String { query.map { path + "?" + $0 } ?? path }

    /// The `Host` header's value for this URL.
    package var hostHeader: String { Self.hostHeader(host: host, port: port, isHTTPS: isHTTPS) }

    /// The `Host` header's value: an IPv6 literal in brackets, the port only when it is not the scheme's.
    package static func hostHeader(host: String, port: Int, isHTTPS: Bool) -> String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == (isHTTPS ? 443 : 80) ? bracketed : "\(bracketed):\(port)"
    }

    /// `text` when a person may be sent there (a notification shows it, a browser opens it): an
    /// http(s) URL of at most 2 KiB without spaces or control characters. Networks choose these.
    package static func openable(_ text: String) -> String? {
        guard text.utf8.count <= 2048, HTTPURL(text) != nil,
            text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else {
            return nil
        }
        return text
    }

    /// Where `reference` (a redirect's `Location`) points from this URL, as RFC 3986 (section 5.2)
    /// resolves it: an absolute URL as written; `//host/path` with this scheme; `/path`, `?query`,
    /// `#fragment` and `path` on this host. `nil` when it points at another scheme or is no URL.
    package func resolving(_ reference: String) -> HTTPURL? {
        if let absolute = HTTPURL(reference) { return absolute }
        if reference.hasPrefix("//") { return HTTPURL((isHTTPS ? "https:" : "http:") + reference) }
        let beforeEnd = reference.prefix { !"/?#".contains($0) }
        // `mailto:`, `javascript:`: a scheme of its own, not a place on this host.
        if let colon = beforeEnd.firstIndex(of: ":"), Self.isScheme(beforeEnd[..<colon]) { return nil }
        let origin = (isHTTPS ? "https://" : "http://") + hostHeader
        let referencePath = reference.prefix { !"?#".contains($0) }
        let suffix = reference[referencePath.endIndex...]
        if referencePath.isEmpty {
            // `?query` replaces the query; `#fragment` (or nothing) keeps it.
            let target = suffix.hasPrefix("?") ? path : requestTarget
            return HTTPURL(origin + target + suffix)
        }
        let merged =
            referencePath.hasPrefix("/")
            ? referencePath : path[...(path.lastIndex(of: "/") ?? path.startIndex)] + referencePath
        return HTTPURL(origin + Self.removingDotSegments(merged) + suffix)
    }

    /// `/a/b/../c/./d` → `/a/c/d` (RFC 3986 section 5.2.4), for a path that starts with `/`.
    private static func removingDotSegments(_ path: Substring) -> String {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var kept: [Substring] = []
        for (offset, segment) in segments.enumerated() {
            let isLast = offset == segments.count - 1
            switch segment {
            case ".": if isLast { kept.append("") }
            case "..":
                if !kept.isEmpty { kept.removeLast() }
                if isLast { kept.append("") }
            default: kept.append(segment)
            }
        }
        return "/" + kept.joined(separator: "/")
    }

    /// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }
}
