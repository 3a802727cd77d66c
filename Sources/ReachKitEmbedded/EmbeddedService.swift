import Logging
import ReachConfig
import ReachCore
import ReachKit
import ReachLink
import ReachPOSIX
import ReachProbes

/// The connectivity service for hosts without reachd: the daemon's own monitor, rtnetlink link
/// source, probers and probe scheduler, run inside the program, with no HTTP server.
///
/// It takes reachd's ``ReachConfig/Configuration`` (parsed from the same YAML, or the embedded
/// default, which probes `http://127.0.0.1:8080/api/v1/health`), so that the verdicts are the
/// daemon's for the same faults. Hooks, webhooks, listen addresses and the token are the daemon's
/// business and are ignored here.
public final class EmbeddedService: ConnectivityService {
    /// The monitor, for what the protocol does not cover (probe now, per-target results).
    public let monitor: ConnectivityMonitor
    private let targets: [ProbeTarget]
    private let linkSource: (any LinkSource)?
    private let prober: (any Prober)?
    private let clock: MonitorClock
    private let logger: Logger

    /// - Parameters:
    ///   - configuration: reachd's configuration; `nil` for its embedded default.
    ///   - linkSource: Where link facts come from: rtnetlink when `nil`.
    ///   - prober: What probes the targets: reachd's HTTP, TCP and gRPC probers when `nil`.
    /// - Throws: ``ReachConfig/ConfigurationError`` only when `configuration` is `nil` and the
    ///   embedded default cannot be read (which a test pins).
    public init(
        configuration: Configuration? = nil, linkSource: (any LinkSource)? = nil, prober: (any Prober)? = nil,
        clock: MonitorClock = .system(), logger: Logger
    ) throws {
        let configuration = try configuration ?? Configuration.load(from: .embeddedDefault)
        self.monitor = ConnectivityMonitor(configuration: configuration.monitor, clock: clock, logger: logger)
        self.targets = configuration.targets
        self.linkSource = linkSource
        self.prober = prober
        self.clock = clock
        self.logger = logger
    }

    // MARK: ConnectivityService

    public var current: ServiceVerdict { ServiceVerdict(monitor.current.verdict) }

    public var isConnected: Bool { monitor.current.verdict.isConnected }

    public var isLikelyConnected: Bool { monitor.isLikelyConnected }

    public func verdicts() -> AsyncStream<ServiceVerdict> {
        let subscription = monitor.subscribe()
        let (stream, continuation) = AsyncStream.makeStream(of: ServiceVerdict.self, bufferingPolicy: .bufferingNewest(32))
        let pump = Task {
            for await event in subscription { continuation.yield(ServiceVerdict(event.verdict)) }
            continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
        return stream
    }

    @discardableResult
    public func onConnectivityRestored(
        named name: String?, timeout: Duration?, _ body: @escaping @Sendable (ConnectivityTransition) async throws -> Void
    ) -> CallbackHandle {
        let id = monitor.onConnectivityRestored(named: name, timeout: timeout, body)
        return CallbackHandle(id: id) { [monitor] in monitor.removeCallback($0) }
    }

    @discardableResult
    public func onConnectivityLost(
        named name: String?, timeout: Duration?, _ body: @escaping @Sendable (ConnectivityTransition) async throws -> Void
    ) -> CallbackHandle {
        let id = monitor.onConnectivityLost(named: name, timeout: timeout, body)
        return CallbackHandle(id: id) { [monitor] in monitor.removeCallback($0) }
    }

    public func callbackReports() -> Subscription<CallbackReport> { monitor.callbackReports() }

    /// Watches links and probes targets until the calling task is cancelled; then ends every verdict stream.
    public func run() async throws {
        var http: HTTPProber?
        let prober: any Prober
        if let given = self.prober {
            prober = given
        } else {
            let pooled = HTTPProber(logger: logger)
            http = pooled
            prober = ProbeDispatcher(http: pooled, grpc: GRPCHealthProber(logger: logger))
        }
        let linkSource = linkSource ?? NetlinkLinkSource(logger: logger)
        let scheduler = ProbeScheduler(targets: targets, prober: prober, monitor: monitor, clock: clock)
        let (monitor, logger) = (monitor, logger)
        await withDiscardingTaskGroup { group in
            group.addTask { await monitor.run() }
            group.addTask { await scheduler.run() }
            group.addTask {
                do {
                    try await linkSource.run { monitor.update(links: $0) }
                } catch is CancellationError {
                } catch {
                    // As the daemon does: carry on without link facts, on probes alone.
                    logger.error("link source failed: carrying on without link facts, on probes alone", metadata: ["error": "\(error)"])
                    monitor.forgetLinks()
                }
            }
        }
        await http?.shutdown()
    }
}
