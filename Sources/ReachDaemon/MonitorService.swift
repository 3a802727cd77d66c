import Logging
import ReachCore
import ServiceLifecycle

/// Runs the monitor (coalesced link changes, callbacks) as a service; on graceful shutdown the
/// monitor ends every subscription so streams close cleanly.
struct MonitorService: Service {
    let monitor: ConnectivityMonitor
    let logger: Logger

    func run() async {
        // The service group traps SIGTERM and SIGINT before it starts any service: from here on a
        // signal means a graceful stop.
        logger.info("reachd running")
        await cancelWhenGracefulShutdown { await monitor.run() }
    }
}
