import ReachAPI
import ReachCore
import ReachSupport

/// What a ``ConnectivityService`` says now: the monitor's verdict, or, for a reachd-backed
/// service that cannot reach reachd, that it does not know and why.
///
/// A program should not have to tell "reachd says disconnected" from "reachd is down" by the
/// absence of news: the second is a reason of its own, ``Reason/reachdUnreachable(_:)``, with the
/// state `unknown`, never the last `connected` it heard.
///
/// It carries what reachd's status document carries, read the same way from either service: a
/// program that embeds the monitor and one that follows reachd see equal verdicts for the same
/// verdict (times to the millisecond; each target without its probe timings).
public struct ServiceVerdict: Sendable, Hashable {
    /// Why the state is what it is.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// The monitor's reason (embedded, or as reachd reported it).
        case monitor(VerdictReason)
        /// reachd's event stream is not reachable, or broke; the words say how.
        case reachdUnreachable(String)

        /// A stable snake_case code: the monitor's (`healthy`, `no_link`, ...) or `reachd_unreachable`.
        public var code: String {
            switch self {
            case .monitor(let reason): reason.code
            case .reachdUnreachable: "reachd_unreachable"
            }
        }

        public var description: String {
            switch self {
            case .monitor(let reason): reason.description
            case .reachdUnreachable(let why): "reachd_unreachable: \(why)"
            }
        }
    }

    /// `connected`, `disconnected`, or `unknown` (starting, or reachd unreachable).
    public var state: ConnectivityState
    /// Why, with a stable ``Reason/code``.
    public var reason: Reason
    /// When `state` last changed, as the monitor saw it.
    public var since: WallTime
    /// Where the path breaks (the link, the gateway, DNS, the connection upstream, the server, a
    /// portal): "is it us or the server?", for a program to decide by instead of the reason's
    /// words. `nil` unless `disconnected`, and while the monitor still gathers its evidence.
    public var fault: Fault?
    /// The captive portal: where a person signs in (``CaptivePortal/userPortalURL``), the
    /// venue's page, and when a signed-in session ends; `nil` when there is none.
    public var portal: CaptivePortal?
    /// Interfaces that give a usable link, in index order.
    public var usableInterfaces: [String]
    /// Each uplink's own reachability (`probe.per_interface`), in index order: whether another
    /// uplink would do. Empty when that is off or there is one uplink; it never changes `state`.
    public var interfaces: [InterfaceReachability]
    /// Each target, in configuration order: its name, kind, health, the failure that holds it
    /// down (or its last probe's), its certificate and its address families.
    public var targets: [TargetStatus]
    /// How well the connection works, beside ``state`` and never changing it: `good`, or
    /// `impaired` with where (``VerdictQuality/fault``) and how bad; `nil` unless `connected` with
    /// a counted target judged (or when no target has a budget). A program may send less while
    /// it is impaired; no callback runs for it.
    public var quality: VerdictQuality?

    /// A verdict from its parts.
    public init(
        state: ConnectivityState,
        reason: Reason,
        since: WallTime,
        fault: Fault? = nil,
        portal: CaptivePortal? = nil,
        usableInterfaces: [String] = [],
        interfaces: [InterfaceReachability] = [],
        targets: [TargetStatus] = [],
        quality: VerdictQuality? = nil
    ) {
        self.quality = quality
        self.state = state
        self.reason = reason
        self.since = since
        self.fault = fault
        self.portal = portal
        self.usableInterfaces = usableInterfaces
        self.interfaces = interfaces
        self.targets = targets
    }

    /// reachd's verdict, as its status document carries it.
    package init(_ document: StatusDocument) {
        self.init(core: document.verdict)
    }

    /// The embedded monitor's verdict, read through the status document reachd would send for it:
    /// so that both services give equal verdicts by construction, not by two mappings kept alike.
    package init(_ verdict: Verdict) {
        self.init(StatusDocument(event: ConnectivityEvent(sequence: 0, verdict: verdict), likelyConnected: false))
    }

    /// The core's verdict as it is: the inverse of ``coreVerdict``, for the reaction rule's round trip.
    init(core verdict: Verdict) {
        self.init(
            state: verdict.state,
            reason: .monitor(verdict.reason),
            since: verdict.since,
            fault: verdict.fault,
            portal: verdict.portal,
            usableInterfaces: verdict.usableInterfaces,
            interfaces: verdict.interfaces,
            targets: verdict.targets,
            quality: verdict.quality
        )
    }

    /// Whether the state is `connected`.
    public var isConnected: Bool { state == .connected }

    /// The target whose failure is the reason, by name: what a program names in "the server is
    /// down" without parsing words; `nil` when the reason is not a target's.
    public var failingTarget: String? {
        if case .monitor(let reason) = reason { reason.target } else { nil }
    }

    /// The address families over which some target fails while it answers over the other (a
    /// broken IPv6 path that Happy Eyeballs hides): the verdict stays connected, this says what is wrong.
    public var degradedFamilies: [IPFamily] { coreVerdict.degradedFamilies }

    /// The core's verdict for this one, for the core's reaction rule. Only `connected` and
    /// `disconnected` verdicts make transitions, and those carry a monitor reason.
    var coreVerdict: Verdict {
        let reason: VerdictReason = if case .monitor(let reason) = reason { reason } else { .starting }
        var verdict = Verdict(
            state: state,
            reason: reason,
            since: since,
            usableInterfaces: usableInterfaces,
            targets: targets,
            portal: portal,
            fault: fault
        )
        verdict.interfaces = interfaces
        verdict.quality = quality
        return verdict
    }
}
