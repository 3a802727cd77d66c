import Logging
import ReachCore

/// The one prober the scheduler sees: hands each target to the prober for its kind.
package struct ProbeDispatcher: WatchingProber, StartingProber {
    package let http: HTTPProber
    package let tcp: TCPProber
    package let grpc: GRPCHealthProber
    package let dns: DNSProber
    package let icmp: ICMPBurstProber

    package init(
        http: HTTPProber,
        tcp: TCPProber = TCPProber(),
        grpc: GRPCHealthProber,
        dns: DNSProber = DNSProber(),
        icmp: ICMPBurstProber = ICMPBurstProber()
    ) {
        self.http = http
        self.tcp = tcp
        self.grpc = grpc
        self.dns = dns
        self.icmp = icmp
    }

    package func probe(_ target: ProbeTarget) async -> ProbeResult {
        switch target.check {
        case .http: await http.probe(target)
        case .tcp: await tcp.probe(target)
        case .grpc: await grpc.probe(target)
        case .dns: await dns.probe(target)
        case .icmp: await icmp.probe(target)
        }
    }

    /// HTTP, TCP and DNS probes start on the caller's event loop, ICMP bursts on the echo thread;
    /// a gRPC probe, async in grpc-swift, runs in a task of its own.
    package func start(_ target: ProbeTarget, whenDone: @escaping @Sendable (ProbeResult) -> Void) -> ProbeCancellation
    {
        switch target.check {
        case .http: http.start(target, whenDone: whenDone)
        case .tcp: tcp.start(target, whenDone: whenDone)
        case .grpc: grpc.startInTask(target, whenDone: whenDone)
        case .dns: dns.start(target, whenDone: whenDone)
        case .icmp: icmp.start(target, whenDone: whenDone)
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
