import Logging
import NIOCore
import NIOPosix
import ReachCore

/// Probes a TCP endpoint by opening a connection and closing it again: proof that something
/// listens and the path to it works, for servers that speak no HTTP (databases, brokers).
public struct TCPProber: Prober {
    private let eventLoopGroup: any EventLoopGroup

    public init(eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.eventLoopGroup = eventLoopGroup
    }

    public func probe(_ target: ProbeTarget) async -> ProbeResult {
        let endpoint = target.endpoint
        let started = ContinuousClock.now
        var bootstrap = ClientBootstrap(group: eventLoopGroup)
            .connectTimeout(.init(target.timeout))
        switch target.addressFamily {
        case .auto: break
        // Binding to the family's wildcard address makes every attempt of the other family fail.
        case .ipv4: bootstrap = bootstrap.bind(to: try! SocketAddress(ipAddress: "0.0.0.0", port: 0))
        case .ipv6: bootstrap = bootstrap.bind(to: try! SocketAddress(ipAddress: "::", port: 0))
        }
        let connecting = bootstrap.connect(host: endpoint.host, port: endpoint.port)
        let outcome: Result<any Channel, any Error> = await withTaskCancellationHandler {
            do { return .success(try await connecting.get()) } catch { return .failure(error) }
        } onCancel: {
            connecting.whenSuccess { channel in channel.close(promise: nil) }
        }
        let elapsed = started.duration(to: .now)
        switch outcome {
        case .success(let channel):
            // Close with a reset, not a FIN: no TIME_WAIT socket left behind every second.
            try? await (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            try? await channel.close()
            if Task.isCancelled { return .failure(target.name, .cancelled, phase: .connect, latency: elapsed) }
            return ProbeResult(target: target.name, timings: ProbeTimings(connect: elapsed, total: elapsed))
        case .failure(let error):
            let failure = HTTPFailureClassifier.classify(error, phase: .connect)
            return ProbeResult(target: target.name, failure: failure, timings: ProbeTimings(total: elapsed))
        }
    }
}
