import Logging
import ReachConfig
import ReachCore
import ReachLink
import ServiceLifecycle

/// The composition root: builds the monitor and every adapter from the configuration and runs
/// them as one service group until SIGTERM or SIGINT.
///
/// Each adapter is one service in ``services``; adding one is one line there. The adapters default
/// to the real ones; tests pass stand-ins for those around the unit they test.
public struct Daemon: Sendable {
    public let configuration: Configuration
    public let monitor: ConnectivityMonitor
    private let source: Configuration.Source
    private let linkSource: any LinkSource
    private let logger: Logger

    /// - Parameters:
    ///   - linkSource: Where link facts come from; rtnetlink when `nil`.
    public init(
        configuration: Configuration, source: Configuration.Source, clock: MonitorClock = .system(),
        linkSource: (any LinkSource)? = nil, logger: Logger
    ) {
        self.configuration = configuration
        self.source = source
        self.logger = logger
        self.linkSource = linkSource ?? NetlinkLinkSource(logger: logger)
        self.monitor = ConnectivityMonitor(configuration: configuration.monitor, clock: clock, logger: logger)
    }

    /// The services, in start order; they stop in reverse, so the monitor, first, ends last.
    var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        [
            .init(service: MonitorService(monitor: monitor, logger: logger)),
            .init(service: LinkService(source: linkSource, monitor: monitor, logger: logger), successTerminationBehavior: .ignore),
        ]
    }

    /// Runs until SIGTERM or SIGINT (or until the calling task is cancelled), then stops within a second.
    public func run() async throws {
        logStartup()
        var group = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = .milliseconds(750)
        group.maximumCancellationDuration = .milliseconds(200)
        try await ServiceGroup(configuration: group).run()
        logger.info("reachd stopped")
    }

    private func logStartup() {
        logger.info("reachd \(ReachVersion.current) starting", metadata: [
            "config": "\(source)",
            "targets": "\(configuration.targets.count)",
            "policy": "\(configuration.policy)",
        ])
        for target in configuration.targets.prefix(10) {
            logger.info("watching \(target.name): \(target.summary) every \(target.interval.configText), timeout \(target.timeout.configText)", metadata: [
                "target": "\(target.name)", "kind": "\(target.kind)",
            ])
        }
        if configuration.targets.count > 10 {
            logger.info("and \(configuration.targets.count - 10) more targets")
        }
    }
}

extension ProbeTarget {
    /// What is probed, in a few words: the URL, or the address and service.
    var summary: String {
        switch check {
        case .http(let http): http.url
        case .tcp(let endpoint): "tcp \(endpoint)"
        case .grpc(let grpc): "grpc health \(grpc.endpoint)\(grpc.service.isEmpty ? "" : " service \(grpc.service)")"
        }
    }
}
