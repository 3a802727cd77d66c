import ReachCore
import ReachSupport
import ServiceLifecycle

/// The connectivity service a program holds: is the machine connected, what changed, and what to
/// run when it is restored or lost.
///
/// Two services satisfy it, so that a program switches with one line: ``ReachdService`` follows a
/// running reachd; `EmbeddedService` (in `ReachKitEmbedded`) runs the same monitor, link source and
/// probers in-process for hosts without the daemon. `TestConnectivityService` (in
/// `ReachKitTesting`) is the one a test drives by hand.
///
/// Each is a swift-service-lifecycle `Service`: run it in the program's `ServiceGroup` (or call
/// ``run()`` in a task of its own) for as long as the program wants it. Graceful shutdown or
/// cancelling that task stops it.
///
/// Callbacks follow the core's reaction rule (the daemon's own code for hooks and webhooks): one
/// run per transition, never two at once, transitions that arrive meanwhile coalesced into one
/// more run at the latest state or skipped and reported, a timeout after which the run is reported
/// as timed out. Leaving `unknown` is not a transition, so a reachd that restarts, or a stream
/// that breaks and comes back at the same state, runs nothing.
public protocol ConnectivityService: Service {
    /// The verdict now.
    var current: ServiceVerdict { get }

    /// Whether the verdict is `connected`.
    var isConnected: Bool { get }

    /// `connected`, backed by a probe result no older than the next one is due (the most often
    /// probed target's interval, half a second and its timeout; 5 s at the least): the
    /// synchronous best guess before sending something that must not wait for a timeout.
    var isLikelyConnected: Bool { get }

    /// Probes every target now, without waiting for its interval, and returns the verdict then:
    /// for a program's "try again" button, or after a change the monitor cannot see (a VPN it just
    /// started). It waits at most the longest probe timeout plus a second (never over 30 s), then
    /// answers with what is known; a change reaches ``current``, ``verdicts()`` and the callbacks
    /// as any other does.
    ///
    /// - Throws: ``ReachdClientError`` when reachd cannot be asked (the reachd-backed service).
    func checkNow() async throws -> ServiceVerdict

    /// The verdicts: the current one first, then each change, until ``run()`` ends or the consuming
    /// task is cancelled. A consumer that falls far behind skips to the newest.
    func verdicts() -> AsyncStream<ServiceVerdict>

    /// Runs `body` on each `disconnected` → `connected` transition, within `timeout` (30 s when `nil`).
    @discardableResult
    func onConnectivityRestored(
        named name: String?,
        timeout: Duration?,
        _ body: @escaping @Sendable (ServiceTransition) async throws -> Void
    ) -> CallbackHandle

    /// Runs `body` on each `connected` → `disconnected` transition, within `timeout` (30 s when `nil`).
    @discardableResult
    func onConnectivityLost(
        named name: String?,
        timeout: Duration?,
        _ body: @escaping @Sendable (ServiceTransition) async throws -> Void
    ) -> CallbackHandle

    /// Every callback run's outcome (and every skip), from now on: what the reaction rule did, never silent.
    func callbackReports() -> Subscription<CallbackReport>

    /// Follows connectivity and runs callbacks until graceful shutdown or until the calling task
    /// is cancelled; then ends every stream of ``verdicts()``.
    func run() async throws
}

extension ConnectivityService {
    /// Runs `body` on each restoration with the default timeout.
    @discardableResult
    public func onConnectivityRestored(
        named name: String? = nil,
        _ body: @escaping @Sendable (ServiceTransition) async throws -> Void
    ) -> CallbackHandle {
        onConnectivityRestored(named: name, timeout: nil, body)
    }

    /// Runs `body` on each loss with the default timeout.
    @discardableResult
    public func onConnectivityLost(
        named name: String? = nil,
        _ body: @escaping @Sendable (ServiceTransition) async throws -> Void
    ) -> CallbackHandle {
        onConnectivityLost(named: name, timeout: nil, body)
    }
}

/// A registered callback; ``remove()`` takes it off future transitions (a run under way ends on
/// its own). Dropping the handle does not remove the callback: registrations last as long as the
/// service unless removed.
public struct CallbackHandle: Sendable {
    /// The callback's id, as its `CallbackReport`s name it.
    public let id: CallbackID
    private let removal: @Sendable (CallbackID) -> Bool

    /// A handle for the callback `id` that `removal` takes off (a service's own registry).
    package init(id: CallbackID, removal: @escaping @Sendable (CallbackID) -> Bool) {
        self.id = id
        self.removal = removal
    }

    /// Removes the callback from future transitions; returns whether it was still registered.
    @discardableResult
    public func remove() -> Bool { removal(id) }
}
