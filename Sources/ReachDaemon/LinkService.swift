import Logging
import ReachCore
import ServiceLifecycle

/// Feeds any ``LinkSource`` into the monitor, as a service. A link source that fails is logged and
/// the daemon carries on without link facts: the verdict then rests on probes alone, which is
/// less than reachd can do but better than stopping.
public struct LinkService<Source: LinkSource>: Service {
    let source: Source
    let monitor: ConnectivityMonitor
    let logger: Logger

    public init(source: Source, monitor: ConnectivityMonitor, logger: Logger) {
        self.source = source
        self.monitor = monitor
        self.logger = logger
    }

    public func run() async {
        let monitor = monitor
        do {
            try await cancelWhenGracefulShutdown { try await source.run(report: monitor.update(links:)) }
        } catch is CancellationError {
            return
        } catch {
            logger.error("link source stopped: link facts are no longer watched", metadata: ["error": "\(error)"])
        }
    }
}
