import Logging
import ReachCore
import ServiceLifecycle

/// Feeds a ``LinkSource`` into the monitor, as a service.
///
/// A link source that fails is logged and the daemon carries on without link facts: the verdict
/// then rests on probes alone, which is less than reachd can do but better than stopping. The
/// composition root therefore runs this service with `successTerminationBehavior: .ignore`.
struct LinkService: Service {
    let source: any LinkSource
    let monitor: ConnectivityMonitor
    let logger: Logger

    func run() async {
        let (source, monitor) = (source, monitor)
        do {
            try await cancelWhenGracefulShutdown { try await source.run(report: monitor.update(links:)) }
        } catch is CancellationError {
            return
        } catch {
            logger.error("link source failed: carrying on without link facts, on probes alone", metadata: ["error": "\(error)"])
        }
    }
}
