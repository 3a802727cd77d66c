import NIOCore
import NIOPosix
import ReachCore
import ReachSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A probe's connection to an address, started here and handed to NIO while it is still being
/// made, instead of through `ClientBootstrap.connect`.
///
/// The bootstrap's connect is a chain of about ten futures (options, registration, the connect,
/// its own timeout task) and asks the kernel for the socket's error and addresses three more times:
/// with the connect's completion, about 85k of a probe's 187k instructions (docs/performance.md,
/// *Instructions per probe*). Here the socket is made
/// non-blocking with `SO_LINGER` 0 (so closing it resets, and no TIME_WAIT piles up), its connect
/// is started, and `ClientBootstrap.withConnectedSocket` registers it on the loop as it is. The
/// kernel holds the first write back until the connection is up, and a refused or unreachable
/// connect comes back as the socket's error on that write or read, with the same errno NIO's own
/// connect reports; ``ConnectWatcher`` tells the exchange when it is up.
///
/// Names (NIO's resolver races the families) and probes bound to an uplink (`SO_BINDTODEVICE`,
/// with its own failure words) still go through the bootstrap: see ``address(_:family:interface:)``.
///
/// One per prober: it keeps the bootstraps it hands sockets over with, one per event loop and kind
/// of connection, made once. A bootstrap made for each probe, its channel options changed twice
/// and an initializer closure made for it, cost about 3.5k instructions a probe; the exchange adds
/// its handlers once NIO has registered the channel instead (``HTTPExchange``).
final class ProbeSocket: Sendable {
    private struct Kind: Hashable {
        var loop: ObjectIdentifier
        var writesOnce: Bool
    }

    private let bootstraps = Mutex<[Kind: ClientBootstrap]>([:])

    init() {}

    /// The address a probe connects to by itself: `address` (an endpoint's host that is an address
    /// literal, parsed once per plan) when it is of `family` and the probe has no interface. `nil`
    /// when the bootstrap connects: a name, an address of the other family (it fails there, in its
    /// words) or a probe of one uplink.
    static func address(_ address: SocketAddress?, family: AddressFamily, interface: String?) -> SocketAddress? {
        guard interface == nil, let address, family.admits(address) else { return nil }
        return address
    }

    /// Starts connecting to `address` and hands the socket to NIO on `loop`: a channel registered
    /// and active, its pipeline empty. The caller adds its handlers at once (on `loop`, before any
    /// read), with a ``ConnectWatcher`` at the bottom when the first write is not its own.
    ///
    /// - Parameter writesOnce: As for ``NIOPosix/ClientBootstrap/probing(writesOnce:)``:
    ///   drop NIO's default `TCP_NODELAY` for a connection that writes once.
    func connect(to address: SocketAddress, on loop: any EventLoop, writesOnce: Bool) -> EventLoopFuture<any Channel> {
        let descriptor: CInt
        do {
            descriptor = try Self.connecting(to: address)
        } catch {
            return loop.makeFailedFuture(error)
        }
        return bootstrap(on: loop, writesOnce: writesOnce).withConnectedSocket(descriptor)
    }

    private func bootstrap(on loop: any EventLoop, writesOnce: Bool) -> ClientBootstrap {
        let kind = Kind(loop: ObjectIdentifier(loop), writesOnce: writesOnce)
        return bootstraps.withLock { made in
            if let bootstrap = made[kind] { return bootstrap }
            let bootstrap = ClientBootstrap(group: loop).probing(writesOnce: writesOnce)
            made[kind] = bootstrap
            return bootstrap
        }
    }

    /// A non-blocking socket with `SO_LINGER` 0 whose connect to `address` is under way (or done).
    private static func connecting(to address: SocketAddress) throws(IOError) -> CInt {
        let family = address.protocol == .inet6 ? AF_INET6 : AF_INET
        let descriptor = socket(family, CInt(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        var resetOnClose = linger(l_onoff: 1, l_linger: 0)
        let lingerSet = setsockopt(
            descriptor,
            SOL_SOCKET,
            SO_LINGER,
            &resetOnClose,
            socklen_t(MemoryLayout<linger>.size)
        )
        let connected = address.withSockAddr { Glibc.connect(descriptor, $0, socklen_t($1)) }
        guard lingerSet == 0, connected == 0 || errno == EINPROGRESS else {
            let code = errno
            close(descriptor)
            throw IOError(errnoCode: code, reason: lingerSet == 0 ? "connect" : "setsockopt")
        }
        return descriptor
    }
}
