import ReachSupport

extension UpstreamCheck {
    /// systemd-resolved's stub, which `/etc/resolv.conf` names when resolved manages it; its
    /// upstream servers are in ``resolvedUpstreamFile``.
    package static let resolvedStub = "127.0.0.53"
    package static let resolvConfFile = ResolverConfiguration.resolvConfFile
    package static let resolvedUpstreamFile = ResolverConfiguration.resolvedUpstreamFile

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
        // A scoped link-local address (fe80::1%eth0) is on a link by definition, and never read.
        let addresses = [resolvConf, resolvedUpstream ?? ""].flatMap(ResolverConfiguration.nameservers(in:))
        return addresses.first { address in !address.isLoopback && !onLink.contains { $0.contains(address) } }
            .map { HostPort(host: "\($0)", port: 53) }
    }
}
