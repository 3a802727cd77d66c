import Logging
import ReachCore

/// The one prober the scheduler sees: hands each target to the prober for its kind.
public struct ProbeDispatcher: WatchingProber {
    public let http: HTTPProber
    public let tcp: TCPProber
    public let grpc: GRPCHealthProber

    public init(http: HTTPProber, tcp: TCPProber = TCPProber(), grpc: GRPCHealthProber) {
        self.http = http
        self.tcp = tcp
        self.grpc = grpc
    }

    public func probe(_ target: ProbeTarget) async -> ProbeResult {
        switch target.check {
        case .http: await http.probe(target)
        case .tcp: await tcp.probe(target)
        case .grpc: await grpc.probe(target)
        }
    }

    public func watches(_ target: ProbeTarget) -> Bool {
        if case .grpc(let check) = target.check { return check.watch }
        return false
    }

    public func watch(
        _ target: ProbeTarget, epoch: @escaping @Sendable () -> ProbeEpoch, report: @escaping @Sendable (ProbeResult, ProbeEpoch) -> Void
    ) async {
        await grpc.watch(target, epoch: epoch, report: report)
    }
}
