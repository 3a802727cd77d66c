import Logging
import NIOCore
import NIOPosix
import ReachCore
import Synchronization

/// Probes a TCP endpoint by opening a connection and closing it again: proof that something
/// listens and the path to it works, for servers that speak no HTTP (databases, brokers).
///
/// The connect, the close and the hand-over of the result all happen on one event loop, the
/// current one when the scheduler's tick runs on a loop of the group.
package struct TCPProber: StartingProber {
    private let eventLoopGroup: any EventLoopGroup

    /// - Parameter eventLoopGroup: Where connections are made; NIO's shared group by default.
    package init(eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.eventLoopGroup = eventLoopGroup
    }

    /// Connects on the current loop when the caller runs on one of the group's, else on the next.
    package func start(_ target: ProbeTarget, whenDone: @escaping @Sendable (ProbeResult) -> Void) -> ProbeCancellation
    {
        let started = ContinuousClock.now
        let cancelled = CancelFlag()
        let loop = eventLoopGroup.any()
        let connecting = ClientBootstrap.forProbe(
            on: loop,
            connectTimeout: target.timeout,
            writesOnce: true,
            interface: target.interface
        )
        .connect(to: target.endpoint, family: target.addressFamily, on: loop)
        connecting.whenComplete { outcome in
            let elapsed = started.duration(to: .now)
            switch outcome {
            case .success(let channel):
                channel.close(promise: nil)
                whenDone(
                    cancelled.isSet
                        ? .failure(target.name, .cancelled, phase: .connect, latency: elapsed)
                        : ProbeResult(target: target.name, timings: ProbeTimings(connect: elapsed, total: elapsed))
                )
            case .failure(let error):
                let failure = HTTPFailureClassifier.classify(error, phase: .connect)
                whenDone(ProbeResult(target: target.name, failure: failure, timings: ProbeTimings(total: elapsed)))
            }
        }
        return ProbeCancellation { cancelled.set() }
    }
}

/// Whether a TCP probe was cancelled while it connected: the connect still runs to its end (its
/// own timeout bounds it), but a connection made after cancelling is no evidence.
private final class CancelFlag: Sendable {
    private let value = Atomic(false)

    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
