import NIOCore
import NIOPosix
import ReachCore
import ReachSupport

/// Probes a `dns` target: asks its resolver (or the resolvers this host uses) one question and
/// judges the answer (``ReachCore/DNSCheck/failure(of:)``), reading every byte itself
/// (``DNSMessage``).
///
/// A question goes over UDP, and again over TCP when the answer comes back truncated; with
/// `transport: tcp`, over TCP only. With several resolvers (the host's, up to three) they are
/// asked in turn, as the C library does, each given an equal share of what is left of the
/// timeout; `SERVFAIL`, `REFUSED` or a refused connection moves on to the next at once. The first
/// answer that settles the question ends the probe, and names its resolver
/// (``ReachCore/ProbeResult/resolver``).
///
/// Everything happens on one event loop, the current one when the scheduler's tick runs on a loop
/// of the group: one datagram socket (or connection) per question, closed when it ends.
package struct DNSProber: StartingProber {
    private let eventLoopGroup: any EventLoopGroup
    private let resolvers: SystemResolvers

    /// - Parameters:
    ///   - eventLoopGroup: Where questions are asked; NIO's shared group by default.
    ///   - resolvers: The host's resolvers, for targets without a `server`.
    package init(
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        resolvers: SystemResolvers = SystemResolvers()
    ) {
        self.eventLoopGroup = eventLoopGroup
        self.resolvers = resolvers
    }

    package func start(_ target: ProbeTarget, whenDone: @escaping @Sendable (ProbeResult) -> Void) -> ProbeCancellation
    {
        guard case .dns(let check) = target.check else {
            whenDone(.failure(target.name, .protocolError, detail: "not a dns target", latency: .zero))
            return .none
        }
        let servers = (check.server.map { [$0] } ?? resolvers.servers).filter { server in
            switch (target.addressFamily, server.literalAddress?.family) {
            case (.ipv4, .ipv6), (.ipv6, .ipv4): false
            default: true
            }
        }
        guard !servers.isEmpty else {
            let family = target.addressFamily == .auto ? "" : " \(target.addressFamily.rawValue)"
            whenDone(
                .failure(
                    target.name,
                    .noResolver,
                    detail: "no\(family) nameserver in \(resolvers.source)",
                    latency: .zero
                )
            )
            return .none
        }
        let loop = eventLoopGroup.any()
        let exchange = DNSExchange(target: target, check: check, servers: servers, loop: loop, whenDone: whenDone)
        if loop.inEventLoop {
            exchange.begin()
        } else {
            loop.execute { exchange.begin() }
        }
        return ProbeCancellation { loop.execute { exchange.cancel() } }
    }
}
