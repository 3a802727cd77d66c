import NIOCore
import ReachPOSIX

#if canImport(Glibc)
import Glibc
#endif

extension Channel {
    /// Sends this socket's traffic out of `interface` only (`SO_BINDTODEVICE`), whatever the
    /// routes prefer: a probe of one uplink, or a network's captive-portal API on the interface it
    /// was learned on. Set before the connect, on the channel's loop.
    ///
    /// Linux allows it without privileges since 5.7; before, it takes `CAP_NET_RAW` and fails with
    /// `EPERM` (``DeviceBindingError/isRefused``).
    package func bind(toDevice interface: String) -> EventLoopFuture<Void> {
        var name: InterfaceName = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        guard let provider = self as? any SocketOptionProvider, interface.utf8.count < MemoryLayout<InterfaceName>.size
        else {
            return eventLoop.makeFailedFuture(DeviceBindingError(interface: interface, errno: nil))
        }
        withUnsafeMutableBytes(of: &name) { $0.copyBytes(from: interface.utf8) }
        return provider.unsafeSetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET),
            name: SocketOptionName(SO_BINDTODEVICE),
            value: name
        )
        .flatMapErrorThrowing { error in
            throw DeviceBindingError(interface: interface, errno: (error as? IOError)?.errnoCode)
        }
    }
}

/// A socket could not be bound to an interface (`SO_BINDTODEVICE`).
package struct DeviceBindingError: Error, CustomStringConvertible {
    package var interface: String
    /// The kernel's errno; `nil` when the name is too long or the channel has no socket.
    package var errno: Int32?

    /// The kernel refuses the binding itself (`EPERM`: Linux before 5.7 without `CAP_NET_RAW`):
    /// nothing is learned about the network, so per-interface reachability stays unknown.
    package var isRefused: Bool { errno == EPERM }

    package var description: String {
        "cannot send out of \(interface) only: "
            + (errno.map { SystemCallError.reason($0) } ?? "not a usable interface name")
    }
}

/// `IFNAMSIZ` bytes, NUL-terminated: what `SO_BINDTODEVICE` takes.
private typealias InterfaceName = (
    CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar
)
