import Glibc
import ReachSupport

/// The source address the kernel would give traffic to `destination`: asked by connecting a UDP
/// socket (which sends nothing) and reading its local address. It follows the system's own
/// routing, rules and metrics included, without parsing them: the interface with that address is
/// the one the traffic leaves by.
package enum RouteSourceAddress {
    /// `nil` when there is no route (or no address of the family).
    package static func toward(_ destination: IPAddress) -> IPAddress? {
        let descriptor = socket(
            destination.family == .ipv4 ? AF_INET : AF_INET6,
            Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0
        )
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let connected = destination.withSocketAddress(port: 53) { connect(descriptor, $0, $1) }
        guard connected == 0 else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { return nil }
        return IPAddress(socketAddress: storage)
    }
}
