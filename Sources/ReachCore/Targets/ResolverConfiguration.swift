import ReachSupport

/// The resolvers this host uses, read from the resolver configuration files' text: what a `dns`
/// target without a `server` asks.
///
/// "Uses" means where its queries go over the network. Where systemd-resolved manages the host,
/// `/etc/resolv.conf` names only its stub (`127.0.0.53`, or `127.0.0.54`), which answers from a
/// cache (a cached name keeps resolving after the servers behind it died) and stands for the links'
/// DNS servers. Those are in `/run/systemd/resolve/resolv.conf`, and a target asks them. Anywhere
/// else, `/etc/resolv.conf`'s `nameserver` lines are what the C library asks, a local resolver
/// (dnsmasq, unbound on 127.0.0.1) included.
package enum ResolverConfiguration {
    /// `/etc/resolv.conf`: what the C library reads.
    package static let resolvConfFile = "/etc/resolv.conf"
    /// systemd-resolved's view of the links' DNS servers, in resolv.conf's format.
    package static let resolvedUpstreamFile = "/run/systemd/resolve/resolv.conf"
    /// systemd-resolved's stubs: the one with its cache and search domains, and the proxy (v247+).
    package static let resolvedStubs: Set<IPAddress> = [IPAddress("127.0.0.53")!, IPAddress("127.0.0.54")!]
    /// The C library asks at most three servers (`MAXNS`); so does a target.
    package static let maximumServers = 3

    /// The addresses of `text`'s `nameserver` lines, in order, once each. A scoped link-local
    /// address (`fe80::1%eth0`) is left out: the scope names an interface reachd would have to bind to.
    package static func nameservers(in text: String) -> [IPAddress] {
        var addresses: [IPAddress] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, words[0] == "nameserver", let address = IPAddress(words[1]),
                !addresses.contains(address)
            else { continue }
            addresses.append(address)
        }
        return addresses
    }

    /// The servers a `dns` target asks, port 53, at most ``maximumServers``: `resolvConf`'s, or
    /// where they are only systemd-resolved's stubs, `resolvedUpstream`'s (its file; `nil` when
    /// there is none). Empty when there is no resolver at all: the probe's reason is `no_resolver`.
    package static func servers(resolvConf: String, resolvedUpstream: String?) -> [HostPort] {
        var addresses = nameservers(in: resolvConf)
        if !addresses.isEmpty, addresses.allSatisfy(resolvedStubs.contains), let resolvedUpstream {
            addresses = nameservers(in: resolvedUpstream)
        }
        return addresses.prefix(maximumServers).map { HostPort(host: "\($0)", port: 53) }
    }
}
