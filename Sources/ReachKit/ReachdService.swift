#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix
import ReachCore
import ReachLink
import Synchronization

/// The connectivity service backed by a running reachd: follows its event stream and runs the
/// program's callbacks in the program.
///
/// - It connects to `/v1/events` at the endpoint (see ``ReachdEndpoint/resolve(configured:tokenFile:environment:)``),
///   with the bearer token if one is set, and after a break resumes after the last event id it
///   saw: reachd replays what it still remembers, or sends a `reset` event whose verdict replaces
///   what the service knew.
/// - While reachd cannot be reached the verdict is `unknown` with the reason
///   ``ServiceVerdict/Reason/reachdUnreachable(_:)``, never the last `connected`; it reconnects
///   with capped exponential backoff and jitter.
/// - ``isLikelyConnected`` needs evidence at most the validity window old: reachd's own
///   `likely_connected`, refreshed from `/v1/status` while connected. Once it is older, or reachd is
///   gone, it is `false`.
/// - Transitions are moves between `connected` and `disconnected` as reachd reported them;
///   `unknown` in between (reachd restarting, the stream broken) is not one, so a reachd restart at
///   the same state runs no callback, and one that comes back at the other state runs exactly one.
///
/// It speaks HTTP/1.1 on SwiftNIO (``ReachdRequest``): no HTTP client library, no TLS, no server,
/// no netlink, no probers.
public final class ReachdService: ConnectivityService {
    /// Tunables.
    public struct Settings: Sendable {
        /// How old reachd's last word may be for ``ReachdService/isLikelyConnected`` to trust `connected`.
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
            likelyConnectedWindow: Duration = .seconds(5), callbackTimeout: Duration = .seconds(30),
            reconnect: ReconnectBackoff = ReconnectBackoff(first: .milliseconds(250), longest: .seconds(10), jitter: true),
            connectTimeout: Duration = .seconds(3), silenceLimit: Duration = .seconds(45)
        ) {
            self.likelyConnectedWindow = likelyConnectedWindow
            self.callbackTimeout = callbackTimeout
            self.reconnect = reconnect
            self.connectTimeout = connectTimeout
            self.silenceLimit = silenceLimit
        }
    }

    private struct State {
        /// The last `connected` or `disconnected` reachd reported: what a transition moves from.
        var lastDefinite: ConnectivityState?
        var lastEventID: String?
        /// reachd's `likely_connected` and the uptime at which it was read.
        var likely = false
        var evidenceAt: Duration?
        var isStreaming = false
    }

    /// Where reachd is followed.
    public let endpoint: ReachdEndpoint
    private let settings: Settings
    private let clock: MonitorClock
    private let logger: Logger
    private let state = Mutex(State())
    private let feed: VerdictFanOut
    private let reactions: TransitionReactions

    /// Makes the service; nothing connects until ``run()``, which is called once.
    /// 
    /// - Parameter clock: Times reconnects, evidence and callback timeouts (a test clock in tests).
    public init(endpoint: ReachdEndpoint, settings: Settings = Settings(), clock: MonitorClock = .system(), logger: Logger) {
        self.endpoint = endpoint
        self.settings = settings
        self.clock = clock
        self.logger = logger
        self.feed = VerdictFanOut(
            initial: ServiceVerdict(state: .unknown, reason: .reachdUnreachable("not connected to reachd yet"), since: clock.wallTime))
        self.reactions = TransitionReactions(clock: clock, logger: logger)
    }

    // MARK: ConnectivityService

    public var current: ServiceVerdict { feed.current }

    public var isConnected: Bool { current.isConnected }

    public var isLikelyConnected: Bool {
        let (likely, evidenceAt) = state.withLock { ($0.likely, $0.evidenceAt) }
        guard likely, let evidenceAt, current.isConnected else { return false }
        return clock.uptime - evidenceAt <= settings.likelyConnectedWindow
    }

    public func verdicts() -> AsyncStream<ServiceVerdict> { feed.subscribe() }

    @discardableResult
    public func onConnectivityRestored(
        named name: String?, timeout: Duration?, _ body: @escaping @Sendable (ConnectivityTransition) async throws -> Void
    ) -> CallbackHandle {
        register(name, [.restored], timeout, body)
    }

    @discardableResult
    public func onConnectivityLost(
        named name: String?, timeout: Duration?, _ body: @escaping @Sendable (ConnectivityTransition) async throws -> Void
    ) -> CallbackHandle {
        register(name, [.lost], timeout, body)
    }

    public func callbackReports() -> Subscription<CallbackReport> { reactions.callbackReports() }

    /// Follows reachd until the calling task is cancelled; then ends every verdict stream.
    public func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.reactions.run() }
            group.addTask { await self.follow() }
            group.addTask { await self.refreshEvidence() }
        }
        feed.finish()
    }

    private func register(
        _ name: String?, _ directions: Set<TransitionDirection>, _ timeout: Duration?,
        _ body: @escaping @Sendable (ConnectivityTransition) async throws -> Void
    ) -> CallbackHandle {
        let id = reactions.add(named: name, on: directions, timeout: timeout ?? settings.callbackTimeout, body)
        return CallbackHandle(id: id) { [reactions] in reactions.remove($0) }
    }

    // MARK: Following

    private func follow() async {
        var backoff = settings.reconnect
        while !Task.isCancelled {
            let why: String
            do {
                try await stream { backoff.reset() }
                why = "reachd at \(endpoint.base) closed the event stream"
            } catch is CancellationError {
                break
            } catch {
                why = Self.describe(error, endpoint: endpoint)
            }
            if Task.isCancelled { break }
            lose(why)
            let wait = backoff.next()
            logger.info("reachd unreachable: trying again in \(Int(wait.seconds * 1000)) ms", metadata: ["why": "\(why)"])
            guard (try? await clock.sleep(for: wait)) != nil else { break }
        }
        state.withLock { $0.isStreaming = false }
    }

    /// One connection to the event stream, until it ends.
    private func stream(onEvent: () -> Void) async throws {
        var request = ReachdRequest(
            endpoint: endpoint, path: "/v1/events", headers: [("Accept", "text/event-stream")],
            connectTimeout: settings.connectTimeout, silenceLimit: settings.silenceLimit)
        if let id = state.withLock({ $0.lastEventID }) { request.headers.append(("Last-Event-ID", id)) }
        var parser = EventStreamParser()
        try await request.run { chunk in
            for event in try parser.feed(chunk.readableBytesView) where event.event == "verdict" || event.event == nil {
                let document = try EventDocument.decode(event.data)
                onEvent()
                apply(document, id: event.id)
            }
        }
    }

    /// Takes one event: its verdict replaces what the service knew (on a `reset` too: the verdict
    /// is complete); a move between `connected` and `disconnected` is a transition.
    private func apply(_ document: EventDocument, id: String?) {
        let verdict = document.verdict
        let transition: ConnectivityTransition? = state.withLock { state in
            if let id { state.lastEventID = id }
            state.isStreaming = true
            state.likely = document.likelyConnected
            state.evidenceAt = clock.uptime
            // Published under the lock, so that streams and callbacks see events in reachd's order.
            feed.publish(verdict)
            guard verdict.state != .unknown else { return nil }
            defer { state.lastDefinite = verdict.state }
            guard let last = state.lastDefinite, last != verdict.state else { return nil }
            let transition = ConnectivityTransition(
                direction: verdict.state == .connected ? .restored : .lost, sequence: document.sequence, verdict: verdict.coreVerdict)
            reactions.deliver(transition)
            return transition
        }
        if document.reset { logger.info("reachd's event stream started over (reset): its verdict replaces the one known", metadata: ["state": "\(verdict.state.rawValue)"]) }
        if let transition { logger.debug("transition \(transition.direction.rawValue)", metadata: ["sequence": "\(transition.sequence)"]) }
    }

    /// The stream is gone: the verdict is unknown (why: reachd is unreachable) until reachd speaks again.
    private func lose(_ why: String) {
        state.withLock { state in
            state.isStreaming = false
            state.likely = false
            let current = feed.current
            guard current.reason != .reachdUnreachable(why) else { return }
            let since = current.state == .unknown ? current.since : clock.wallTime
            feed.publish(ServiceVerdict(state: .unknown, reason: .reachdUnreachable(why), since: since))
        }
    }

    /// While the stream is up and says `connected`, reads `/v1/status` every half validity window,
    /// so that ``isLikelyConnected`` rests on reachd's fresh word rather than the last event's.
    private func refreshEvidence() async {
        let interval = settings.likelyConnectedWindow / 2
        let request = ReachdRequest(endpoint: endpoint, path: "/v1/status", connectTimeout: settings.connectTimeout, silenceLimit: settings.connectTimeout)
        while (try? await clock.sleep(for: interval)) != nil {
            guard state.withLock({ $0.isStreaming }), current.isConnected else { continue }
            do {
                var body = ByteBuffer()
                try await request.run { chunk in
                    guard body.readableBytes + chunk.readableBytes <= EventStreamParser.eventLimit else {
                        throw ReachdAnswer(description: "the status from \(endpoint.base) is over \(EventStreamParser.eventLimit >> 20) MiB: not reachd's")
                    }
                    body.writeImmutableBuffer(chunk)
                }
                let document = try EventDocument.decode(String(buffer: body))
                state.withLock { state in
                    guard state.isStreaming, document.state == ConnectivityState.connected.rawValue else { return }
                    state.likely = document.likelyConnected
                    state.evidenceAt = clock.uptime
                }
            } catch {
                logger.debug("could not refresh reachd's status", metadata: ["error": "\(error)"])
            }
        }
    }

    /// An error in words a person can act on.
    static func describe(_ error: any Error, endpoint: ReachdEndpoint) -> String {
        switch error {
        case let answer as ReachdAnswer: return answer.description
        case let error as ReachdEndpointError: return error.description
        case is ReachdSilence: return "the event stream from \(endpoint.base) went silent"
        case ChannelError.connectTimeout: return "connecting to \(endpoint.base) timed out"
        default: break
        }
        switch errno(of: error) {
        case ECONNREFUSED: return "connection refused at \(endpoint.base)"
        case ENOENT: return "no socket at \(endpoint.base)"
        case ECONNRESET, EPIPE: return "reachd at \(endpoint.base) closed the connection"
        default: return "the event stream from \(endpoint.base) broke: \(error)"
        }
    }

    /// The system error under NIO's: a connect attempt's (per address tried) or a socket call's.
    private static func errno(of error: any Error) -> CInt? {
        if let error = error as? IOError { return error.errnoCode }
        if let error = error as? NIOConnectionError { return error.connectionErrors.lazy.compactMap { errno(of: $0.error) }.first }
        return nil
    }
}
