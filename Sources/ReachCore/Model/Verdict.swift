import ReachSupport

/// The one answer reachd exists to give: can this machine reach its server right now?
public enum ConnectivityState: String, Sendable, Hashable, CaseIterable {
    /// No evidence yet: reachd has just started.
    case unknown
    /// A usable link exists and the targets satisfy the policy.
    case connected
    case disconnected
}

/// Why the verdict is what it is.
public enum VerdictReason: Sendable, Hashable, CustomStringConvertible {
    /// reachd has just started and has no evidence yet.
    case starting
    /// A usable link exists; the targets have not answered on it yet.
    case awaitingProbe
    /// The link is usable and the targets satisfy the policy.
    case healthy
    case noLink
    case noAddress
    case noRoute
    /// A captive portal holds this machine's traffic until someone signs in (the verdict's `portal` says where).
    case captivePortal
    /// The target policy does not hold; this is the first failing target (in configuration order) and its reason.
    case targetFailed(target: String, reason: FailureReason)

    init(_ blocker: LinkBlocker) {
        switch blocker {
        case .noLink: self = .noLink
        case .noAddress: self = .noAddress
        case .noRoute: self = .noRoute
        }
    }

    /// A stable snake_case name for JSON, metrics labels and log fields: for a failed target, its
    /// failure's code (`connection_refused`, `timeout`, `http_status`, ...).
    public var code: String {
        switch self {
        case .starting: "starting"
        case .awaitingProbe: "awaiting_probe"
        case .healthy: "healthy"
        case .noLink: "no_link"
        case .noAddress: "no_address"
        case .noRoute: "no_route"
        case .captivePortal: "captive_portal"
        case .targetFailed(_, let reason): reason.code
        }
    }

    /// The verdict's own reason (not a target's failure) that `code` names; `nil` for any other code.
    public init?(ownCode code: String) {
        let own: [VerdictReason] = [.starting, .awaitingProbe, .healthy, .noLink, .noAddress, .noRoute, .captivePortal]
        guard let reason = own.first(where: { $0.code == code }) else { return nil }
        self = reason
    }

    /// The failing target, for `targetFailed`.
    public var target: String? {
        if case .targetFailed(let target, _) = self { return target }
        return nil
    }

    public var description: String {
        if case .targetFailed(let target, let reason) = self { return "\(reason) (target \(target))" }
        return code
    }
}

/// A target's health after hysteresis.
public enum TargetHealth: String, Sendable, Hashable {
    /// No result yet on the current link.
    case unknown
    case healthy
    case unhealthy
}

/// What the monitor knows about one target.
public struct TargetStatus: Sendable, Hashable {
    public var name: String
    /// `http`, `tcp` or `grpc`.
    public var kind: String
    public var health: TargetHealth
    public var lastResult: ProbeResult?
    /// The most recent failure, kept after later successes: while damping holds an unhealthy target
    /// down, it says why the target went down.
    public var lastFailure: ProbeFailure?
    public var lastCheckedAt: WallTime?
    public var consecutiveSuccesses: Int
    public var consecutiveFailures: Int
    /// The certificate the last TLS probe that saw one was presented, kept while later probes fail
    /// before the handshake: its expiry is worth knowing most when the server is away.
    public var certificate: ServerCertificate?
    /// The families the target is checked over one at a time (a name with addresses of both,
    /// every `probe` section's tenth interval by default); empty when it is not.
    public var families: [IPFamily] = []
    /// Of ``families``, those whose last check answered.
    public var answeredFamilies: [IPFamily] = []
    /// Of ``families``, those that fail while another answers: the verdict stays connected.
    public var degradedFamilies: [IPFamily] = []
    /// Where the target is probed (its URL's or address's host and port): a program asking "can I
    /// reach this host?" (GLib's `g_network_monitor_can_reach`) is answered from the target's health.
    package var endpoint: HostPort?
    /// How well the target answers (``TargetQuality``); `nil` without a budget, or before the
    /// window holds enough samples.
    public var quality: TargetQuality?
    /// What its quality window shows now; `nil` for a target without a budget.
    package var qualityMeasures: QualityMeasures?
    /// The target's budget, as configured; `nil` without one.
    package var qualityBudget: QualityBudget?

    public init(
        name: String,
        kind: String,
        health: TargetHealth = .unknown,
        lastResult: ProbeResult? = nil,
        lastFailure: ProbeFailure? = nil,
        lastCheckedAt: WallTime? = nil,
        consecutiveSuccesses: Int = 0,
        consecutiveFailures: Int = 0,
        certificate: ServerCertificate? = nil
    ) {
        self.certificate = certificate
        self.name = name
        self.kind = kind
        self.health = health
        self.lastResult = lastResult
        self.lastFailure = lastFailure
        self.lastCheckedAt = lastCheckedAt
        self.consecutiveSuccesses = consecutiveSuccesses
        self.consecutiveFailures = consecutiveFailures
    }

    /// The failure that made this target unhealthy, if it is.
    public var unhealthyReason: FailureReason? {
        health == .unhealthy ? lastFailure?.reason : nil
    }
}

/// The published answer: state, reason, since when, over which interfaces, and each target's last result.
package struct Verdict: Sendable, Hashable {
    package var state: ConnectivityState
    package var reason: VerdictReason
    /// When `state` last changed.
    package var since: WallTime
    /// Usable interfaces, in index order; empty when no link source is configured.
    package var usableInterfaces: [String]
    /// In configuration order.
    package var targets: [TargetStatus]
    /// The captive portal the reason `captivePortal` is about; `nil` otherwise.
    package var portal: CaptivePortal?
    /// Where the path breaks, on every `disconnected` verdict but one awaiting its first probe; `nil` otherwise.
    package var fault: Fault?
    /// Each uplink's own reachability (`probe.per_interface`), in index order; empty when that is
    /// off or there is only one uplink. It does not change ``state``: the verdict follows the routes.
    package var interfaces: [InterfaceReachability] = []
    /// How well the connection works (``VerdictQuality``), beside ``state``, never changing it:
    /// `nil` unless `connected` with a counted target judged.
    package var quality: VerdictQuality?

    package init(
        state: ConnectivityState,
        reason: VerdictReason,
        since: WallTime,
        usableInterfaces: [String] = [],
        targets: [TargetStatus] = [],
        portal: CaptivePortal? = nil,
        fault: Fault? = nil
    ) {
        self.fault = fault
        self.state = state
        self.reason = reason
        self.since = since
        self.usableInterfaces = usableInterfaces
        self.targets = targets
        self.portal = portal
    }

    package var isConnected: Bool { state == .connected }
}

extension TargetStatus {
    /// A configured target's status before its first result.
    package init(target: ProbeTarget) {
        self.init(name: target.name, kind: target.kind)
        endpoint = target.endpoint
        qualityBudget = target.quality.flatMap { $0.judgesAnything ? $0 : nil }
        qualityMeasures = qualityBudget.map { _ in QualityMeasures() }
    }
}
