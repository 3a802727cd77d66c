import NIOCore
import NIOPosix
import ReachCore

extension ClientBootstrap {
    /// Connects to `endpoint` over `family`: an address directly, a name through NIO's resolver
    /// (both families raced for `auto`).
    ///
    /// Most health endpoints are written as addresses. NIO's resolver runs `getaddrinfo` on a
    /// dispatch queue and races the families even for an address, which cost every probe a thread
    /// hop and a Happy Eyeballs race that could only ever find that one address.
    func connect(to endpoint: HostPort, family: ReachCore.AddressFamily) -> EventLoopFuture<any Channel> {
        var bootstrap = self
        switch family {
        case .auto: break
        // Binding to the family's wildcard address makes every attempt of the other family fail.
        case .ipv4: bootstrap = bootstrap.bind(to: try! SocketAddress(ipAddress: "0.0.0.0", port: 0))
        case .ipv6: bootstrap = bootstrap.bind(to: try! SocketAddress(ipAddress: "::", port: 0))
        }
        if let address = try? SocketAddress(ipAddress: endpoint.host, port: endpoint.port) {
            return bootstrap.connect(to: address)
        }
        return bootstrap.connect(host: endpoint.host, port: endpoint.port)
    }
}
