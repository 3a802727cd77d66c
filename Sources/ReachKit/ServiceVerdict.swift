import ReachCore

/// What a ``ConnectivityService`` says now: the monitor's verdict, or, for a reachd-backed
/// service that cannot reach reachd, that it does not know and why.
///
/// A program should not have to tell "reachd says disconnected" from "reachd is down" by the
/// absence of news: the second is a reason of its own, ``Reason/reachdUnreachable(_:)``, with the
/// state `unknown`, never the last `connected` it heard.
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
    /// Interfaces that give a usable link, in index order.
    public var usableInterfaces: [String]
    /// Each target, in configuration order (from reachd: name, kind, health and failure reason only).
    public var targets: [TargetStatus]

    /// A verdict from its parts.
    public init(state: ConnectivityState, reason: Reason, since: WallTime, usableInterfaces: [String] = [], targets: [TargetStatus] = []) {
        self.state = state
        self.reason = reason
        self.since = since
        self.usableInterfaces = usableInterfaces
        self.targets = targets
    }

    /// The monitor's verdict as it is.
    package init(_ verdict: Verdict) {
        self.init(
            state: verdict.state, reason: .monitor(verdict.reason), since: verdict.since, usableInterfaces: verdict.usableInterfaces,
            targets: verdict.targets)
    }

    /// Whether the state is `connected`.
    public var isConnected: Bool { state == .connected }

    /// The core's verdict for this one, for the core's reaction rule. Only `connected` and
    /// `disconnected` verdicts make transitions, and those carry a monitor reason.
    var coreVerdict: Verdict {
        let reason: VerdictReason = if case .monitor(let reason) = reason { reason } else { .starting }
        return Verdict(state: state, reason: reason, since: since, usableInterfaces: usableInterfaces, targets: targets)
    }
}
