import NIOCore
import NIOPosix
import ReachCore
import ReachSupport

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
/// with its own failure words) still go through the bootstrap: see ``address(of:family:interface:)``.
enum ProbeSocket {
    /// The address a probe of `endpoint` connects to by itself: an address literal of `family`,
    /// probed without an interface. `nil` when the bootstrap connects: a name, an address of the
    /// other family (it fails there, in its words) or a probe of one uplink.
    static func address(of endpoint: HostPort, family: AddressFamily, interface: String?) -> SocketAddress? {
        guard interface == nil, let address = try? SocketAddress(ipAddress: endpoint.host, port: endpoint.port),
            family.admits(address)
        else { return nil }
        return address
    }

    /// Starts connecting to `address` and hands the socket to NIO on `loop`, set up by
    /// `configure`, which must put a ``ConnectWatcher`` at the bottom of the pipeline.
    ///
    /// - Parameter writesOnce: As for ``NIOPosix/ClientBootstrap/forProbe(on:connectTimeout:writesOnce:interface:configure:)``:
    ///   drop NIO's default `TCP_NODELAY` for a connection that writes once.
    static func connect(
        to address: SocketAddress,
        on loop: any EventLoop,
        writesOnce: Bool,
        configure: @escaping @Sendable (any Channel) throws -> Void
    ) -> EventLoopFuture<any Channel> {
        let descriptor: CInt
        do {
            descriptor = try connecting(to: address)
        } catch {
            return loop.makeFailedFuture(error)
        }
        let bootstrap = ClientBootstrap(group: loop)
        return (writesOnce ? bootstrap.enableMPTCP(true).enableMPTCP(false) : bootstrap)
            .channelInitializer { channel in
                do {
                    try configure(channel)
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
            .withConnectedSocket(descriptor)
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
