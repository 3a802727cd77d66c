extension TestNamespace {
    /// Makes this namespace a router that answers echoes to `prefix` with ICMP host unreachable:
    /// it forwards, sends ICMP errors without a rate limit (`net.ipv4.icmp_ratelimit=0`; the
    /// per-route `net.ipv4.route.error_cost` of an `unreachable` route is global, so not that), and
    /// routes `prefix` to a link of its own where nobody answers its neighbour lookups.
    package func routeToNowhere(_ prefix: String) async throws {
        try await ip("link", "add", "nowhere0", "type", "veth", "peer", "name", "nowhere1")
        try await ip("link", "set", "nowhere0", "up")
        try await ip("link", "set", "nowhere1", "up")
        try await ip("route", "add", prefix, "dev", "nowhere0")
        try await sysctl("net.ipv4.ip_forward=1", "net.ipv4.icmp_ratelimit=0")
    }
}
