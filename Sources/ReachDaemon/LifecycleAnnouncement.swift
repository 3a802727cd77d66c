import Logging
import ReachCore
import ServiceLifecycle

/// Logs "reachd running" once every listener is bound and the service group has trapped SIGTERM
/// and SIGINT (from then on a signal means a graceful stop), and "reachd stopping"
/// (``ReachLogEvent/stopping``) as soon as a graceful shutdown begins.
///
/// Last in the service list, so the group tells it first: the stopping line comes before the
/// other services wind down, not after.
struct LifecycleAnnouncement: Service {
    let logger: Logger

    func run() async {
        logger.info("reachd running")
        try? await gracefulShutdown()
        guard !Task.isCancelled else { return }
        logger.notice("reachd stopping", metadata: ReachLogEvent.stopping.metadata)
    }
}
