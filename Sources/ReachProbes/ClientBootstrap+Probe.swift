import NIOCore
import NIOPosix
import ReachCore

#if canImport(Glibc)
import Glibc
#endif

extension ClientBootstrap {
    /// Connects to `endpoint` over `family`: an address directly, a name through NIO's resolver
    /// (both families raced for `auto`).
    ///
    /// Most health endpoints are written as addresses. NIO's resolver runs `getaddrinfo` on a
    /// dispatch queue and races the families even for an address, which cost every probe a thread
    /// hop and a Happy Eyeballs race that could only ever find that one address. An address also
    /// names its family, so it needs no bind to the family's wildcard address: a system call per
    /// probe that could only ever succeed.
    func connect(to endpoint: HostPort, family: ReachCore.AddressFamily, on loop: any EventLoop) -> EventLoopFuture<any Channel> {
        if let address = try? SocketAddress(ipAddress: endpoint.host, port: endpoint.port) {
            guard family.admits(address) else {
                let reason = "the target is limited to \(family.rawValue), and \(endpoint.host) is not an \(family.rawValue) address"
                return loop.makeFailedFuture(IOError(errnoCode: EAFNOSUPPORT, reason: reason))
            }
            return connect(to: address)
        }
        switch family {
        case .auto: return connect(host: endpoint.host, port: endpoint.port)
        // Binding to the family's wildcard address makes every attempt of the other family fail.
        case .ipv4: return bind(to: try! SocketAddress(ipAddress: "0.0.0.0", port: 0)).connect(host: endpoint.host, port: endpoint.port)
        case .ipv6: return bind(to: try! SocketAddress(ipAddress: "::", port: 0)).connect(host: endpoint.host, port: endpoint.port)
        }
    }
}

extension ClientBootstrap {
    /// A bootstrap without NIO's default `TCP_NODELAY`, for a connection that writes at most once
    /// (a plain HTTP request, or nothing for a TCP probe), where Nagle's algorithm never holds
    /// anything back.
    ///
    /// Applying the option costs a `setsockopt`, a `getsockname` NIO makes to check the family,
    /// and a chain of futures, on every probe. NIO offers no way to drop a default option but
    /// this one: enabling MPTCP removes it (documented: "Enabling this setting will re-enable
    /// Nagle's algorithm"), and disabling MPTCP again keeps plain TCP. TLS writes the handshake's
    /// end and the request separately, so an HTTPS probe keeps the default.
    func withoutNoDelay() -> ClientBootstrap {
        enableMPTCP(true).enableMPTCP(false)
    }
}

extension ReachCore.AddressFamily {
    /// Whether a connection to `address` is one of this family.
    fileprivate func admits(_ address: SocketAddress) -> Bool {
        switch (self, address.protocol) {
        case (.auto, _), (.ipv4, .inet), (.ipv6, .inet6): true
        default: false
        }
    }
}
