import NIOCore
import NIOPosix
import ReachCore
import ReachOutbound
import ReachSupport

extension ClientBootstrap {
    /// This bootstrap, without NIO's default `TCP_NODELAY` when the connection writes at most once
    /// (a plain HTTP request, or nothing for a TCP probe): Nagle's algorithm never holds such a
    /// write back, and applying the option cost a `setsockopt`, a `getsockname` NIO makes to check
    /// the family, and a chain of futures, on every probe. NIO offers no way to drop a default
    /// option but this one: enabling MPTCP removes it (documented: "Enabling this setting will
    /// re-enable Nagle's algorithm"), and disabling MPTCP again keeps plain TCP. TLS writes the
    /// handshake's end and the request separately, so an HTTPS probe keeps the default.
    func probing(writesOnce: Bool) -> ClientBootstrap {
        writesOnce ? enableMPTCP(true).enableMPTCP(false) : self
    }

    /// A bootstrap for one probe's connection on `loop`. Every channel it makes closes with a
    /// reset (``NIOCore/Channel/closeWithReset()``) and is then set up by `configure`, synchronously
    /// on the loop, answering with the loop's cached void future: `makeCompletedFuture` would
    /// allocate one per probe.
    ///
    /// - Parameter writesOnce: The connection writes at most once (see ``probing(writesOnce:)``).
    /// - Parameter interface: The uplink a probe of one path leaves through (`SO_BINDTODEVICE`);
    ///   `nil`, a target's own probe, follows the routes and pays nothing for it.
    static func forProbe(
        on loop: any EventLoop,
        connectTimeout: Duration,
        writesOnce: Bool,
        interface: String? = nil,
        configure: @escaping @Sendable (any Channel) throws -> Void = { _ in }
    ) -> ClientBootstrap {
        ClientBootstrap(group: loop).probing(writesOnce: writesOnce)
            .connectTimeout(.init(connectTimeout))
            .channelInitializer { channel in
                do {
                    try channel.closeWithReset()
                    guard let interface else {
                        try configure(channel)
                        return channel.eventLoop.makeSucceededVoidFuture()
                    }
                    return channel.bind(toDevice: interface).flatMapThrowing { try configure(channel) }
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
    }

    /// Connects to `endpoint` over `family`: an address directly, a name through NIO's resolver
    /// (both families raced for `auto`).
    ///
    /// Most health endpoints are written as addresses. NIO's resolver runs `getaddrinfo` on a
    /// dispatch queue and races the families even for an address, which cost every probe a thread
    /// hop and a Happy Eyeballs race that could only ever find that one address. An address also
    /// names its family, so it needs no bind to the family's wildcard address: a system call per
    /// probe that could only ever succeed.
    func connect(
        to endpoint: HostPort,
        family: ReachCore.AddressFamily,
        on loop: any EventLoop
    ) -> EventLoopFuture<any Channel> {
        if let address = try? SocketAddress(ipAddress: endpoint.host, port: endpoint.port) {
            guard family.admits(address) else {
                let detail =
                    "the target is limited to \(family.rawValue), and \(endpoint.host) is not an \(family.rawValue) address"
                return loop.makeFailedFuture(AddressFamilyMismatch(detail: detail))
            }
            return connect(to: address)
        }
        // Binding to the family's wildcard address makes every attempt of the other family fail.
        let wildcard: String
        switch family {
        case .auto: return connect(host: endpoint.host, port: endpoint.port)
        case .ipv4: wildcard = "0.0.0.0"
        case .ipv6: wildcard = "::"
        }
        return bind(to: try! SocketAddress(ipAddress: wildcard, port: 0)).connect(
            host: endpoint.host,
            port: endpoint.port
        )
    }
}

extension ReachCore.AddressFamily {
    /// Whether a connection to `address` is one of this family.
    func admits(_ address: SocketAddress) -> Bool {
        switch (self, address.protocol) {
        case (.auto, _), (.ipv4, .inet), (.ipv6, .inet6): true
        default: false
        }
    }
}
