import ReachSupport

extension UpstreamCheck {
    /// systemd-resolved's stub, which `/etc/resolv.conf` names when resolved manages it; its
    /// upstream servers are in ``resolvedUpstreamFile``.
    package static let resolvedStub = "127.0.0.53"
    package static let resolvConfFile = "/etc/resolv.conf"
    package static let resolvedUpstreamFile = "/run/systemd/resolve/resolv.conf"

    /// The resolver to use as the upstream reference (``resolver``), TCP port 53: the first
    /// `nameserver` of `resolvConf` that is neither loopback nor on a network an interface of
    /// `links` is directly connected to; those of `resolvedUpstream` (systemd-resolved's upstream
    /// servers) when `resolvConf` names none such. `nil` when there is none.
    ///
    /// A resolver on a directly connected network (the home router's) is left out because it
    /// answers while the line behind the router is dead: it would make every outage the server's.
    package static func resolverReference(
        resolvConf: String,
        resolvedUpstream: String?,
        links: LinkSnapshot?
    ) -> HostPort? {
        let onLink = (links?.interfaces ?? []).flatMap(\.addresses).map(\.prefix)
        for text in [resolvConf, resolvedUpstream ?? ""] {
            for line in text.split(separator: "\n") {
                let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard words.count >= 2, words[0] == "nameserver" else { continue }
                // A scoped link-local address (fe80::1%eth0) is on a link by definition.
                guard let address = IPAddress(words[1]), !address.isLoopback,
                    !onLink.contains(where: { $0.contains(address) })
                else { continue }
                return HostPort(host: "\(address)", port: 53)
            }
        }
        return nil
    }
}
