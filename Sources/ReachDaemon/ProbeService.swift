import Logging
import ReachCore
import ReachProbes
import ServiceLifecycle

/// Runs the probe scheduler as a service, and closes the probers' connections when it stops.
struct ProbeService: Service {
    let scheduler: ProbeScheduler
    let http: HTTPProber

    func run() async {
        await cancelWhenGracefulShutdown { await scheduler.run() }
        await http.shutdown()
    }
}
