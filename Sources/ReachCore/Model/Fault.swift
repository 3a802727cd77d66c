/// Where the path to the server breaks: the question a person on the phone with support is asked
/// first, "is it you or us?". Every `disconnected` verdict carries one (its `fault`).
///
/// Ordered from this machine outwards: the link, the router, name resolution, the internet
/// connection beyond the router, the server itself. A portal holds the traffic on the network.
public enum Fault: String, Sendable, Hashable, CaseIterable {
    /// No usable link: no carrier, no address or no route (the reasons `no_link`, `no_address`, `no_route`).
    case link
    /// The default gateway does not answer while the targets fail.
    case gateway
    /// The target's name does not resolve while link and gateway are fine.
    case dns
    /// The server and the upstream reference (`upstream.check`) are both unreachable: the internet
    /// connection is down, not the server.
    case upstream
    /// The server answers wrongly or refuses, or times out while the upstream reference answers.
    case server
    /// A captive portal holds the traffic until someone signs in.
    case portal

    /// The wire word: the status document's `fault`, `REACHD_FAULT`, the metrics' `fault` label.
    public var code: String { rawValue }

    /// The fault a reason alone shows, before the gateway and upstream evidence refine it: `nil`
    /// for a verdict that is not about a failure (healthy, starting, awaiting a probe).
    public init?(_ reason: VerdictReason) {
        switch reason {
        case .starting, .awaitingProbe, .healthy: return nil
        case .noLink, .noAddress, .noRoute: self = .link
        case .captivePortal: self = .portal
        case .targetFailed(_, let failure):
            guard let fault = Fault(failure) else { return nil }
            self = fault
        }
    }

    /// The fault a target's failure alone shows: a name that does not resolve, a resolver's
    /// failure or no resolver at all is `dns`; anything else is the server's until evidence about
    /// the path says otherwise. `nil` for `not_permitted`: this machine does not allow the probe
    /// (ICMP echo), which is no part of the path's fault.
    public init?(_ failure: FailureReason) {
        switch failure {
        case .notPermitted: return nil
        case .dnsFailure, .noResolver: self = .dns
        case _ where failure.isResolverAnswer: self = .dns
        default: self = .server
        }
    }
}

extension FailureReason {
    /// A resolver's answer that is not what was asked for: `nxdomain`, `servfail`, `dns_refused`,
    /// a truncated, malformed or unexpected answer. Only `dns` targets fail with these.
    package var isResolverAnswer: Bool {
        switch self {
        case .nxdomain, .servfail, .dnsRefused, .truncatedAnswer, .malformedAnswer, .unexpectedAnswer: true
        default: false
        }
    }
}
