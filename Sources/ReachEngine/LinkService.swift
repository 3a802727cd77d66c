import Logging
import ReachCore
import ServiceLifecycle

/// Feeds a ``LinkSource`` into the monitor, as a service.
///
/// A link source that fails is logged and the engine carries on without link facts: the verdict
/// then rests on probes alone, which is less than reachd can do but better than stopping. The
/// service then idles until shutdown, so that the group stops its services in order.
struct LinkService: Service {
    let source: any LinkSource
    let monitor: ConnectivityMonitor
    /// Also see every snapshot (the daemon's link metrics), as they are when the service starts.
    let observers: EngineObservers
    let logger: Logger

    func run() async {
        let (source, monitor, observe) = (source, monitor, observers.links)
        do {
            try await cancelWhenGracefulShutdown {
                try await source.run { snapshot in
                    monitor.update(links: snapshot)
                    observe(snapshot)
                }
            }
        } catch is CancellationError {
            return
        } catch {
            logger.error(
                "link source failed: carrying on without link facts, on probes alone",
                metadata: ["error": "\(error)"]
            )
            monitor.forgetLinks()
        }
        try? await gracefulShutdown()
    }
}
