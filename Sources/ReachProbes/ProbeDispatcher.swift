import Logging
import ReachCore

/// The one prober the scheduler sees: hands each target to the prober for its kind.
package struct ProbeDispatcher: WatchingProber, StartingProber {
    package let http: HTTPProber
    package let tcp: TCPProber
    package let grpc: GRPCHealthProber

    package init(http: HTTPProber, tcp: TCPProber = TCPProber(), grpc: GRPCHealthProber) {
        self.http = http
        self.tcp = tcp
        self.grpc = grpc
    }

    package func probe(_ target: ProbeTarget) async -> ProbeResult {
        switch target.check {
        case .http: await http.probe(target)
        case .tcp: await tcp.probe(target)
        case .grpc: await grpc.probe(target)
        }
    }

    /// HTTP and TCP probes start on the caller's event loop; a gRPC probe, async in grpc-swift,
    /// runs in a task of its own.
    package func start(_ target: ProbeTarget, whenDone: @escaping @Sendable (ProbeResult) -> Void) -> ProbeCancellation
    {
        switch target.check {
        case .http: http.start(target, whenDone: whenDone)
        case .tcp: tcp.start(target, whenDone: whenDone)
        case .grpc: grpc.startInTask(target, whenDone: whenDone)
        }
    }

    package func watches(_ target: ProbeTarget) -> Bool {
        if case .grpc(let check) = target.check { return check.watch }
        return false
    }

    package func watch(
        _ target: ProbeTarget,
        epoch: @escaping @Sendable () -> ProbeEpoch,
        report: @escaping @Sendable (ProbeResult, ProbeEpoch) -> Void
    ) async {
        await grpc.watch(target, epoch: epoch, report: report)
    }
}
