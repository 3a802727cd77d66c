import Logging
import ReachCore
import ReachKit
import ReachPOSIX
import ReachSupport
import ServiceLifecycle
import Synchronization

/// A ``ReachKit/ConnectivityService`` that a test drives by hand: it says what the test sets, and
/// its transitions run the program's callbacks by the same reaction rule, with the same code, as
/// ``ReachKit/ReachdService`` and `EmbeddedService`. So a program's restoration code is tested as
/// it will run, without reachd, a network or a clock to wait for.
///
/// ```swift
/// let service = TestConnectivityService(.disconnected)
/// let uploads = Uploads(service: service)                  // registers its restoration callback
/// let running = Task { try await service.run() }           // callbacks run while it runs
/// let reports = await service.connect()                    // a restoration: waits for the callbacks
/// #expect(reports.map(\.outcome) == [.succeeded])
/// ```
///
/// Transitions follow the real services' rule: a move between `connected` and `disconnected`
/// is one, and leaving `unknown` (the state it starts in unless told otherwise) is none.
public final class TestConnectivityService: ConnectivityService {
    private struct State {
        var sequence: UInt64 = 0
        var isLikelyConnected: Bool
        var checkRequests = 0
        /// The registered callbacks and their directions, to know whose reports a transition awaits.
        var callbacks: [CallbackID: TransitionDirection] = [:]
    }

    private let feed: VerdictFeed
    private let clock: MonitorClock
    private let state: Mutex<State>

    /// - Parameters:
    ///   - initial: The state it says first, with the reason a real service would give for it
    ///     (`healthy`, `no_link`, or `starting`).
    ///   - callbackTimeout: A callback's timeout when it names none (30 s, as in the real services).
    ///   - clock: Times callbacks and their timeouts, and dates the verdicts.
    ///   - logger: Where callback outcomes are logged; nowhere by default (``callbackReports()`` has them).
    public init(
        _ initial: ConnectivityState = .unknown,
        callbackTimeout: Duration = .seconds(30),
        clock: MonitorClock = .system(),
        logger: Logger = Logger(label: "ReachKitTesting") { _ in SwiftLogNoOpLogHandler() }
    ) {
        let reason: VerdictReason =
            switch initial {
            case .connected: .healthy
            case .disconnected: .noLink
            case .unknown: .starting
            }
        self.feed = VerdictFeed(
            initial: ServiceVerdict(state: initial, reason: .monitor(reason), since: clock.wallTime),
            callbackTimeout: callbackTimeout,
            clock: clock,
            logger: logger
        )
        self.clock = clock
        self.state = Mutex(State(isLikelyConnected: initial == .connected))
    }

    // MARK: Driving it

    /// Says `connected` (reason `healthy`); from `disconnected` that is a restoration. Returns the
    /// reports of the callbacks it ran, once each has one (see ``publish(_:)``).
    @discardableResult
    public func connect() async -> [CallbackReport] {
        await publish(ServiceVerdict(state: .connected, reason: .monitor(.healthy), since: clock.wallTime))
    }

    /// Says `disconnected` for `reason`; from `connected` that is a loss. Returns the reports of
    /// the callbacks it ran, once each has one (see ``publish(_:)``).
    @discardableResult
    public func disconnect(_ reason: VerdictReason = .noLink) async -> [CallbackReport] {
        await publish(ServiceVerdict(state: .disconnected, reason: .monitor(reason), since: clock.wallTime))
    }

    /// Makes `verdict` the current one (any state and reason: `unknown` with
    /// ``ReachKit/ServiceVerdict/Reason/reachdUnreachable(_:)`` is what a reachd-backed service says
    /// while reachd is down) and sends it to every stream of ``verdicts()``;
    /// ``isLikelyConnected`` follows it.
    ///
    /// When it makes a transition, this returns once every callback registered for that direction
    /// has reported on it (succeeded, failed, timed out or skipped), with those reports; else at
    /// once, with none. Callbacks run only while ``run()`` runs.
    @discardableResult
    public func publish(_ verdict: ServiceVerdict) async -> [CallbackReport] {
        // Subscribed before the transition is delivered, so that no report can come first.
        let reports = feed.callbackReports()
        let (transition, awaited): (ServiceTransition?, Set<CallbackID>) = state.withLock { state in
            state.sequence += 1
            state.isLikelyConnected = verdict.isConnected
            guard let transition = feed.publish(verdict, sequence: state.sequence) else { return (nil, []) }
            return (transition, Set(state.callbacks.filter { $0.value == transition.direction }.keys))
        }
        guard let transition, !awaited.isEmpty else { return [] }
        var collected: [CallbackReport] = []
        for await report in reports where report.sequence == transition.sequence && awaited.contains(report.callback) {
            collected.append(report)
            if collected.count == awaited.count { break }
        }
        return collected
    }

    // MARK: ConnectivityService

    public var current: ServiceVerdict { feed.current }

    public var isConnected: Bool { current.isConnected }

    /// Whether the last verdict was `connected`, unless the test set it since: `false` while
    /// connected is what a frozen reachd or stale evidence gives.
    public var isLikelyConnected: Bool {
        get { state.withLock { $0.isLikelyConnected } }
        set { state.withLock { $0.isLikelyConnected = newValue } }
    }

    public func verdicts() -> AsyncStream<ServiceVerdict> { feed.verdicts() }

    /// Counts the request and answers with the current verdict: what a check finds is the test's
    /// to say, with ``publish(_:)`` before or after.
    public func checkNow() async -> ServiceVerdict {
        state.withLock { $0.checkRequests += 1 }
        return current
    }

    /// How many times ``checkNow()`` was called: whether the program's "try again" asked for a check.
    public var checkRequests: Int { state.withLock { $0.checkRequests } }

    @discardableResult
    public func onConnectivityRestored(
        named name: String?,
        timeout: Duration?,
        _ body: @escaping @Sendable (ServiceTransition) async throws -> Void
    ) -> CallbackHandle {
        register(name, .restored, timeout, body)
    }

    @discardableResult
    public func onConnectivityLost(
        named name: String?,
        timeout: Duration?,
        _ body: @escaping @Sendable (ServiceTransition) async throws -> Void
    ) -> CallbackHandle {
        register(name, .lost, timeout, body)
    }

    public func callbackReports() -> Subscription<CallbackReport> { feed.callbackReports() }

    /// Runs the callbacks until graceful shutdown or until the calling task is cancelled; then
    /// ends every verdict stream.
    public func run() async throws {
        await cancelWhenGracefulShutdown { await self.feed.run() }
    }

    private func register(
        _ name: String?,
        _ direction: TransitionDirection,
        _ timeout: Duration?,
        _ body: @escaping @Sendable (ServiceTransition) async throws -> Void
    ) -> CallbackHandle {
        state.withLock { state in
            let handle = feed.register(name, on: direction, timeout: timeout, body)
            state.callbacks[handle.id] = direction
            return CallbackHandle(id: handle.id) { [weak self] id in
                self?.state.withLock { _ = $0.callbacks.removeValue(forKey: id) }
                return handle.remove()
            }
        }
    }
}
