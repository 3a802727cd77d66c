import Glibc
import ReachSupport

extension IPAddress {
    /// Calls `body` with a `sockaddr_in`/`sockaddr_in6` for this address and `port`, and its length.
    package func withSocketAddress<Result>(
        port: UInt16,
        _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result {
        let bytes = networkBytes
        if family == .ipv4 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: bytes) }
            return Self.pass(&address, to: body)
        }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: bytes) }
        return Self.pass(&address, to: body)
    }

    /// Hands `address` to `body` as a `sockaddr` with its length.
    private static func pass<Address, Result>(
        _ address: inout Address,
        to body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }

    /// The address a `sockaddr_storage` holds (IPv4 or IPv6), else `nil`.
    package init?(socketAddress storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let bytes = withUnsafeBytes(of: &storage) { raw in
                Array(
                    UnsafeRawBufferPointer(
                        start: raw.baseAddress! + MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!,
                        count: 4
                    )
                )
            }
            self.init(bytes: bytes)
        case AF_INET6:
            let bytes = withUnsafeBytes(of: &storage) { raw in
                Array(
                    UnsafeRawBufferPointer(
                        start: raw.baseAddress! + MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!,
                        count: 16
                    )
                )
            }
            self.init(bytes: bytes)
        default:
            return nil
        }
    }
}
