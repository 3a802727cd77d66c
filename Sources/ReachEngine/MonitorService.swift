import ReachCore
import ServiceLifecycle

/// Runs the monitor (coalesced link changes, callbacks) as a service; on graceful shutdown the
/// monitor ends every subscription so streams close cleanly.
struct MonitorService: Service {
    let monitor: ConnectivityMonitor

    func run() async {
        await cancelWhenGracefulShutdown { await monitor.run() }
    }
}
