import Logging
import ReachCore
import ServiceLifecycle

/// Logs "reachd stopping" (``ReachLogEvent/stopping``) as soon as a graceful shutdown begins.
///
/// Last in the service list, so the group tells it first: the line comes before the other
/// services wind down, not after.
struct StoppingAnnouncement: Service {
    let logger: Logger

    func run() async {
        try? await gracefulShutdown()
        guard !Task.isCancelled else { return }
        logger.notice("reachd stopping", metadata: ReachLogEvent.stopping.metadata)
    }
}
