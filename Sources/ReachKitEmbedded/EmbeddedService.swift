import FoundationEssentials
import Logging
import ReachConfig
import ReachCore
import ReachEngine
import ReachKit
import ReachPOSIX
import ReachSupport
import ServiceLifecycle

/// The connectivity service for hosts without reachd: reachd's own engine (monitor, rtnetlink
/// link source, probes of the targets, the portal's check URL and each uplink and family, the
/// captive-portal API, the path evidence that tells whose fault it is, certificate warnings and
/// sleep), run inside the program.
///
/// It takes the engine's ``Configuration``: built in code, or read from reachd's YAML
/// (the embedded default probes `http://127.0.0.1:8080/api/v1/health`), so that the verdicts are the
/// daemon's for the same faults. What only a daemon serves (listen addresses, the token, metrics,
/// history, hooks, webhooks, sd_notify) is not part of it; a file's sections for those are checked
/// and left aside. ``apply(_:)`` changes the configuration while the service runs, as reachd's reload does.
public final class EmbeddedService: ConnectivityService {
    /// The monitor the service runs: for the package's own tests and benchmarks, which feed it by hand.
    package var monitor: ConnectivityMonitor { engine.monitor }
    /// How long ``checkNow()`` waits for the targets in force (``apply(_:)`` changes it).
    package var checkWaitLimit: Duration { engine.checkWaitLimit }
    private let engine: ConnectivityEngine

    /// - Parameters:
    ///   - configuration: What to watch and how; `nil` for reachd's embedded default.
    ///   - clock: Times probes, hysteresis and callback timeouts (a test clock in tests).
    ///   - logger: Where the engine logs, as reachd's log does.
    /// - Throws: ``ConfigurationError`` only when `configuration` is `nil` and the
    ///   embedded default cannot be read (which a test pins).
    public init(configuration: Configuration? = nil, clock: MonitorClock = .system(), logger: Logger) throws {
        let configuration = try configuration ?? DaemonConfiguration.load(from: .embeddedDefault).engine
        engine = ConnectivityEngine(configuration: configuration, clock: clock, logger: logger)
    }

    /// The service for reachd's configuration file, found as reachd finds it: `path`, else
    /// `$REACHD_CONFIG`, else the embedded default.
    ///
    /// - Throws: ``ConfigurationError`` naming the file and what is wrong in it.
    public convenience init(configurationFile path: String?, clock: MonitorClock = .system(), logger: Logger) throws {
        try self.init(configuration: Configuration(configurationFile: path), clock: clock, logger: logger)
    }

    /// Applies `configuration` while the service runs, as reachd applies a reloaded file, one call
    /// at a time: the targets, the policy, the interfaces, the settle window, the variants and the
    /// portal's check URL change now (streams and callbacks carry on; unchanged targets keep their
    /// state; added and changed ones are probed at once); ``checkNow()`` waits for the new targets.
    ///
    /// - Returns: The settings, by their key in reachd's YAML (`captive_portal`, `tls.warn_before`,
    ///   `upstream.check`), that changed but take effect only in a service made anew; empty when
    ///   everything applied.
    @discardableResult
    public func apply(_ configuration: Configuration) async -> [String] {
        await engine.apply(configuration).needsRestart
    }

    // MARK: ConnectivityService

    public var current: ServiceVerdict { ServiceVerdict(monitor.current.verdict) }

    public var isConnected: Bool { monitor.current.verdict.isConnected }

    public var isLikelyConnected: Bool { monitor.isLikelyConnected }

    /// Probes every target now and returns the verdict then, as reachd answers `POST /v1/check`
    /// (with the same code).
    public func checkNow() async -> ServiceVerdict {
        ServiceVerdict(
            await ImmediateCheck(monitor: monitor, waitLimit: engine.checkWaitLimit).run().verdict
        )
    }

    public func verdicts() -> AsyncStream<ServiceVerdict> {
        AsyncStream(monitor.subscribe()) { ServiceVerdict($0.verdict) }
    }

    @discardableResult
    public func onConnectivityRestored(
        named name: String?,
        timeout: Duration?,
        _ body: @escaping @Sendable (ServiceTransition) async throws -> Void
    ) -> CallbackHandle {
        let id = monitor.onConnectivityRestored(named: name, timeout: timeout) { try await body(ServiceTransition($0)) }
        return CallbackHandle(id: id) { [monitor] in monitor.removeCallback($0) }
    }

    @discardableResult
    public func onConnectivityLost(
        named name: String?,
        timeout: Duration?,
        _ body: @escaping @Sendable (ServiceTransition) async throws -> Void
    ) -> CallbackHandle {
        let id = monitor.onConnectivityLost(named: name, timeout: timeout) { try await body(ServiceTransition($0)) }
        return CallbackHandle(id: id) { [monitor] in monitor.removeCallback($0) }
    }

    public func callbackReports() -> Subscription<CallbackReport> { monitor.callbackReports() }

    /// Runs the engine until graceful shutdown or until the calling task is cancelled; then ends
    /// every verdict stream. A callback still running then is cancelled (and reported so), as in
    /// the daemon.
    public func run() async throws {
        try await engine.run()
    }
}
