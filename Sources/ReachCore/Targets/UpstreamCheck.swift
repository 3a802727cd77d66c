import ReachSupport

/// The upstream reference (`upstream.check`): something beyond the gateway that reachd connects
/// to, only while targets fail, to tell "the internet connection is down" (``Fault/upstream``)
/// from "the server is not responding" (``Fault/server``), as Gatus's connectivity checker does.
public enum UpstreamCheck: Sendable, Hashable, CustomStringConvertible {
    /// The system's resolver, TCP port 53: the first `nameserver` in `/etc/resolv.conf` that is
    /// neither loopback nor on a directly connected network (a resolver on the home router
    /// answers while the line behind it is dead); behind systemd-resolved's stub, its upstream
    /// servers (`/run/systemd/resolve/resolv.conf`). None there: no reference. The default: it is
    /// a host the machine already sends every name to, so reachd contacts no host of its own choosing.
    case resolver
    /// A TCP connect to this host and port.
    case tcp(HostPort)
    /// No reference: a target's silence is told as `server` (reachd cannot tell the internet
    /// connection from the server without one).
    case none

    /// As written in the configuration: `resolver`, `tcp://HOST:PORT`, `none`.
    public var description: String {
        switch self {
        case .resolver: "resolver"
        case .tcp(let address): "tcp://\(address)"
        case .none: "none"
        }
    }
}
