import Logging
import ReachAPI
import ReachClient
import ReachCore
import ReachPOSIX
import ReachSupport
import ServiceLifecycle
import Synchronization

/// The connectivity service backed by a running reachd: follows its event stream and runs the
/// program's callbacks in the program.
///
/// - It connects to `/v1/events` at the endpoint (see ``ReachdEndpoint/resolve(configured:tokenFile:caFile:user:passwordFile:environment:)``),
///   with the bearer token if one is set, and after a break resumes after the last event id it
///   saw: reachd replays what it still remembers, or sends a `reset` event whose verdict replaces
///   what the service knew.
/// - While reachd cannot be reached the verdict is `unknown` with the reason
///   ``ServiceVerdict/Reason/reachdUnreachable(_:)``, never the last `connected`; it reconnects
///   with capped exponential backoff and jitter.
/// - ``isLikelyConnected`` needs reachd's own `likely_connected` (which lasts until reachd's next
///   probe result is due), at most the validity window old: refreshed from `/v1/status` while
///   connected. Once that word is older (a frozen reachd), or reachd is gone, it is `false`.
/// - Transitions are moves between `connected` and `disconnected` as reachd reported them;
///   `unknown` in between (reachd restarting, the stream broken) is not one, so a reachd restart at
///   the same state runs no callback, and one that comes back at the other state runs exactly one.
///
/// It follows reachd with `ReachdClient`'s one reader of the event stream (HTTP/1.1
/// on SwiftNIO), as reachctl and the desktop agent do: no HTTP client library, no TLS, no server,
/// no netlink, no probers.
public final class ReachdService: ConnectivityService {
    /// Tunables.
    public struct Settings: Sendable {
        /// How old reachd's last word may be for ``ReachdService/isLikelyConnected`` to trust
        /// `connected`; the service asks reachd again every half window.
        public var likelyConnectedWindow: Duration
        /// The default timeout of a callback.
        public var callbackTimeout: Duration
        /// The wait between attempts to reach the event stream.
        public var reconnect: ReconnectBackoff
        /// How long to wait for a connection to reachd.
        public var connectTimeout: Duration
        /// How long the event stream may be silent (reachd sends a heartbeat every 15 s) before it counts as broken.
        public var silenceLimit: Duration

        /// The defaults suit a program on the same machine as reachd.
        public init(
            likelyConnectedWindow: Duration = .seconds(5),
            callbackTimeout: Duration = .seconds(30),
            reconnect: ReconnectBackoff = ReconnectBackoff(
                first: .milliseconds(250),
                longest: .seconds(10),
                jitter: true
            ),
            connectTimeout: Duration = .seconds(3),
            silenceLimit: Duration = .seconds(45)
        ) {
            self.likelyConnectedWindow = likelyConnectedWindow
            self.callbackTimeout = callbackTimeout
            self.reconnect = reconnect
            self.connectTimeout = connectTimeout
            self.silenceLimit = silenceLimit
        }
    }

    private struct State {
        /// reachd's `likely_connected` and the uptime at which it was read.
        var likely = false
        var evidenceAt: Duration?
        /// How many times `/v1/status` refreshed the evidence: a heartbeat of a steady verdict.
        var evidenceRefreshes = 0
        var isStreaming = false
    }

    /// Where reachd is followed.
    public var endpoint: ReachdEndpoint { client.endpoint }
    private let client: ReachdClient
    private let settings: Settings
    private let clock: MonitorClock
    private let logger: Logger
    private let state = Mutex(State())
    private let feed: VerdictFeed

    /// Makes the service; nothing connects until ``run()``, which is called once.
    ///
    /// - Parameters:
    ///   - endpoint: Where reachd is, and how to prove who the program is (``ReachdEndpoint/resolve(configured:tokenFile:caFile:user:passwordFile:environment:)``).
    ///   - settings: The validity window, callback timeout and reconnection pace.
    ///   - clock: Times reconnects, evidence and callback timeouts (a test clock in tests).
    ///   - logger: Where reconnections and callback outcomes are logged.
    public init(
        endpoint: ReachdEndpoint,
        settings: Settings = Settings(),
        clock: MonitorClock = .system(),
        logger: Logger
    ) {
        self.client = ReachdClient(endpoint: endpoint, connectTimeout: settings.connectTimeout)
        self.settings = settings
        self.clock = clock
        self.logger = logger
        self.feed = VerdictFeed(
            initial: ServiceVerdict(
                state: .unknown,
                reason: .reachdUnreachable("not connected to reachd yet"),
                since: clock.wallTime
            ),
            callbackTimeout: settings.callbackTimeout,
            clock: clock,
            logger: logger
        )
    }

    // MARK: ConnectivityService

    public var current: ServiceVerdict { feed.current }

    public var isConnected: Bool { current.isConnected }

    /// How many times the evidence was refreshed from `/v1/status` while connected (for tests:
    /// each is a moment the service is known to have passed with nothing new from reachd).
    var evidenceRefreshes: Int { state.withLock { $0.evidenceRefreshes } }

    public var isLikelyConnected: Bool {
        let (likely, evidenceAt) = state.withLock { ($0.likely, $0.evidenceAt) }
        guard likely, let evidenceAt, current.isConnected else { return false }
        return clock.uptime - evidenceAt <= settings.likelyConnectedWindow
    }

    public func verdicts() -> AsyncStream<ServiceVerdict> { feed.verdicts() }

    /// `POST /v1/check`: reachd probes every target now and answers with its verdict then, which
    /// the event stream also brings to ``current``.
    public func checkNow() async throws -> ServiceVerdict {
        ServiceVerdict(try await client.check().document)
    }

    @discardableResult
    public func onConnectivityRestored(
        named name: String?,
        timeout: Duration?,
        _ body: @escaping @Sendable (ServiceTransition) async throws -> Void
    ) -> CallbackHandle {
        feed.register(name, on: .restored, timeout: timeout, body)
    }

    @discardableResult
    public func onConnectivityLost(
        named name: String?,
        timeout: Duration?,
        _ body: @escaping @Sendable (ServiceTransition) async throws -> Void
    ) -> CallbackHandle {
        feed.register(name, on: .lost, timeout: timeout, body)
    }

    public func callbackReports() -> Subscription<CallbackReport> { feed.callbackReports() }

    /// Follows reachd until graceful shutdown or until the calling task is cancelled; then ends
    /// every verdict stream. A callback still running then is cancelled (and reported so).
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.feed.run() }
                group.addTask { await self.follow() }
                group.addTask { await self.refreshEvidence() }
            }
        }
    }

    // MARK: Following

    /// Follows the event stream until cancelled: each verdict is applied, each break makes the
    /// verdict unknown until reachd speaks again.
    private func follow() async {
        try? await client.follow(backoff: settings.reconnect, silenceLimit: settings.silenceLimit, clock: clock) {
            update in
            switch update {
            case .verdict(let document):
                apply(document)
            case .disconnected(let error, let wait):
                lose(error.description)
                logger.info(
                    "reachd unreachable: trying again in \(Int(wait.seconds * 1000)) ms",
                    metadata: ["why": "\(error.description)"]
                )
            }
            return true
        }
        state.withLock { $0.isStreaming = false }
    }

    /// Takes one event: its verdict replaces what the service knew (on a `reset` too: the verdict
    /// is complete); a move between `connected` and `disconnected` is a transition.
    private func apply(_ document: StatusDocument) {
        let verdict = ServiceVerdict(document)
        // Told before the verdict is published, so whoever sees the new verdict can also see why.
        if document.reset {
            logger.info(
                "reachd's event stream started over (reset): its verdict replaces the one known",
                metadata: ["state": "\(verdict.state.rawValue)"]
            )
        }
        let transition = state.withLock { state in
            state.isStreaming = true
            state.likely = document.likelyConnected
            state.evidenceAt = clock.uptime
            // Published under the lock, so that streams and callbacks see events in reachd's order.
            return feed.publish(verdict, sequence: document.sequence)
        }
        if let transition {
            logger.debug(
                "transition \(transition.direction.rawValue)",
                metadata: ["sequence": "\(transition.sequence)"]
            )
        }
    }

    /// The stream is gone: the verdict is unknown (why: reachd is unreachable) until reachd speaks again.
    private func lose(_ why: String) {
        state.withLock { state in
            state.isStreaming = false
            state.likely = false
            let current = feed.current
            guard current.reason != .reachdUnreachable(why) else { return }
            let since = current.state == .unknown ? current.since : clock.wallTime
            // `unknown` is no transition: no sequence number is needed.
            feed.publish(ServiceVerdict(state: .unknown, reason: .reachdUnreachable(why), since: since), sequence: 0)
        }
    }

    /// While the stream is up and says `connected`, reads `/v1/status` every half validity window,
    /// so that ``isLikelyConnected`` rests on reachd's fresh word rather than the last event's.
    private func refreshEvidence() async {
        let interval = settings.likelyConnectedWindow / 2
        while (try? await clock.sleep(for: interval)) != nil {
            guard state.withLock({ $0.isStreaming }), current.isConnected else { continue }
            do {
                let document = try await client.status(timeout: settings.connectTimeout).document
                state.withLock { state in
                    guard state.isStreaming, document.state == ConnectivityState.connected.rawValue else { return }
                    state.likely = document.likelyConnected
                    state.evidenceAt = clock.uptime
                    state.evidenceRefreshes += 1
                }
            } catch {
                logger.debug("could not refresh reachd's status", metadata: ["error": "\(error)"])
            }
        }
    }
}
