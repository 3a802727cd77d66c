import Logging
import ReachCore
import ReachProbes
import ReachSupport
import ServiceLifecycle
import Synchronization

/// Runs the variants of the targets' probes (``ReachCore/ProbeVariant``: each target out of each
/// uplink, each dual-stack name over each family) on a scheduler of their own, with the targets'
/// prober and on the event loop their probes run on: a variant costs what a target's probe costs,
/// and adds no thread and no event loop.
///
/// A scheduler of their own, because the variants come and go with the uplinks while the targets
/// stay: a new list replaces this scheduler (its probes in flight cancelled, which is no
/// evidence) and leaves the targets' scheduler and its grid alone.
struct ProbeVariantService: Service {
    let prober: any Prober
    let monitor: ConnectivityMonitor
    let clock: MonitorClock
    /// The targets' scheduler's timer: the same event loop.
    let timer: EventLoopProbeTimer
    let logger: Logger

    func run() async {
        let observer = BindingRefusalLog(logger: logger)
        await cancelWhenGracefulShutdown {
            var running: Task<Void, Never>?
            for await probes in monitor.variantProbes() {
                running?.cancel()
                await running?.value
                running = nil
                guard !probes.isEmpty else { continue }
                let scheduler = ProbeScheduler(
                    targets: probes,
                    prober: prober,
                    monitor: monitor,
                    clock: clock,
                    observer: observer,
                    timer: timer
                )
                running = Task { await scheduler.run() }
            }
            running?.cancel()
            await running?.value
        }
    }
}

/// Says once that the kernel refuses `SO_BINDTODEVICE` (Linux before 5.7, without `CAP_NET_RAW`):
/// each uplink's reachability then stays unknown.
private final class BindingRefusalLog: ProbeObserver {
    private let logger: Logger
    private let said = Atomic(false)

    init(logger: Logger) {
        self.logger = logger
    }

    func probeFinished(_ target: ProbeTarget, result: ProbeResult) {
        guard target.interface != nil, result.failure?.detail == ProbeFailure.bindingRefused,
            !said.exchange(true, ordering: .relaxed)
        else { return }
        logger.warning(
            "cannot probe each uplink on its own: \(ProbeFailure.bindingRefused); their reachability stays unknown",
            metadata: ["interface": "\(target.interface ?? "")"]
        )
    }
}
