import ReachCore

/// The status API's one answer, as JSON: `GET /v1/status`, `POST /v1/check`, and the `data` of
/// every Server-Sent Event.
///
/// Scripts, dashboards and `reachctl` parse this, so the keys are snake_case and stable: new keys may
/// be added, existing ones keep their name, type and meaning. Unknown values are `null`, never a
/// missing key, so a reader can tell "not known" from "renamed". Nothing secret appears here: the
/// verdict carries target names and results, never URLs, headers or tokens.
public struct StatusDocument: Codable, Sendable, Hashable {
    /// `connected`, `disconnected` or `unknown`.
    public var state: String
    /// A stable code for why (``ReachCore/VerdictReason/code``): `healthy`, `no_link`, `connection_refused`, ...
    public var reason: String
    /// The reason in words for a person, naming the failing target and its failure.
    public var reasonDetail: String
    /// When `state` last changed, RFC 3339 in UTC with milliseconds.
    public var since: String
    /// ``ReachCore/ConnectivityMonitor/isLikelyConnected``: `connected` backed by evidence at most a few seconds old.
    public var likelyConnected: Bool
    /// The event number; an SSE client resumes after it with `Last-Event-ID`.
    public var sequence: UInt64
    /// Only meaningful in the event stream: the client's resume point was lost, so whatever it
    /// knew is void and this event starts over.
    public var reset: Bool
    /// reachd's version.
    public var version: String
    /// The interfaces that currently give a usable link, in index order.
    public var usableInterfaces: [String]
    /// Every target, in configuration order.
    public var targets: [Target]

    /// What reachd knows about one target.
    public struct Target: Codable, Sendable, Hashable {
        public var name: String
        /// `http`, `tcp` or `grpc`.
        public var kind: String
        /// `healthy`, `unhealthy` or `unknown` (no result on the current link yet).
        public var health: String
        /// The failure code of the last probe, or of the failure that holds the target down; `null` when healthy.
        public var reason: String?
        /// Where that probe failed: `dns`, `connect`, `tls`, `head` or `body`.
        public var phase: String?
        /// The prober's words on that failure (the TLS verifier's complaint, the HTTP status).
        public var detail: String?
        /// The last probe's duration, start to finish.
        public var latencySeconds: Double?
        public var timings: Timings
        /// When the last result arrived, RFC 3339 in UTC with milliseconds.
        public var lastCheckedAt: String?
        public var consecutiveFailures: Int
        public var consecutiveSuccesses: Int

        public init(
            name: String, kind: String, health: String, reason: String? = nil, phase: String? = nil, detail: String? = nil,
            latencySeconds: Double? = nil, timings: Timings = Timings(), lastCheckedAt: String? = nil,
            consecutiveFailures: Int = 0, consecutiveSuccesses: Int = 0
        ) {
            self.name = name
            self.kind = kind
            self.health = health
            self.reason = reason
            self.phase = phase
            self.detail = detail
            self.latencySeconds = latencySeconds
            self.timings = timings
            self.lastCheckedAt = lastCheckedAt
            self.consecutiveFailures = consecutiveFailures
            self.consecutiveSuccesses = consecutiveSuccesses
        }

        enum CodingKeys: String, CodingKey {
            case name, kind, health, reason, phase, detail
            case latencySeconds = "latency_seconds"
            case timings
            case lastCheckedAt = "last_checked_at"
            case consecutiveFailures = "consecutive_failures"
            case consecutiveSuccesses = "consecutive_successes"
        }

        /// Writes every key, `null` included: a missing key would read as a schema change.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(kind, forKey: .kind)
            try container.encode(health, forKey: .health)
            try container.encode(reason, forKey: .reason)
            try container.encode(phase, forKey: .phase)
            try container.encode(detail, forKey: .detail)
            try container.encode(latencySeconds, forKey: .latencySeconds)
            try container.encode(timings, forKey: .timings)
            try container.encode(lastCheckedAt, forKey: .lastCheckedAt)
            try container.encode(consecutiveFailures, forKey: .consecutiveFailures)
            try container.encode(consecutiveSuccesses, forKey: .consecutiveSuccesses)
        }
    }

    /// How long each phase of the last probe took; `null` where the prober could not measure it.
    public struct Timings: Codable, Sendable, Hashable {
        public var dnsSeconds: Double?
        public var connectSeconds: Double?
        public var tlsSeconds: Double?
        public var firstByteSeconds: Double?
        /// `null` only before the first result.
        public var totalSeconds: Double?

        public init(
            dnsSeconds: Double? = nil, connectSeconds: Double? = nil, tlsSeconds: Double? = nil, firstByteSeconds: Double? = nil,
            totalSeconds: Double? = nil
        ) {
            self.dnsSeconds = dnsSeconds
            self.connectSeconds = connectSeconds
            self.tlsSeconds = tlsSeconds
            self.firstByteSeconds = firstByteSeconds
            self.totalSeconds = totalSeconds
        }

        enum CodingKeys: String, CodingKey {
            case dnsSeconds = "dns_seconds"
            case connectSeconds = "connect_seconds"
            case tlsSeconds = "tls_seconds"
            case firstByteSeconds = "first_byte_seconds"
            case totalSeconds = "total_seconds"
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(dnsSeconds, forKey: .dnsSeconds)
            try container.encode(connectSeconds, forKey: .connectSeconds)
            try container.encode(tlsSeconds, forKey: .tlsSeconds)
            try container.encode(firstByteSeconds, forKey: .firstByteSeconds)
            try container.encode(totalSeconds, forKey: .totalSeconds)
        }
    }

    enum CodingKeys: String, CodingKey {
        case state, reason
        case reasonDetail = "reason_detail"
        case since
        case likelyConnected = "likely_connected"
        case sequence, reset, version
        case usableInterfaces = "usable_interfaces"
        case targets
    }

    public init(
        state: String, reason: String, reasonDetail: String, since: String, likelyConnected: Bool, sequence: UInt64,
        reset: Bool = false, version: String = ReachVersion.current, usableInterfaces: [String] = [], targets: [Target] = []
    ) {
        self.state = state
        self.reason = reason
        self.reasonDetail = reasonDetail
        self.since = since
        self.likelyConnected = likelyConnected
        self.sequence = sequence
        self.reset = reset
        self.version = version
        self.usableInterfaces = usableInterfaces
        self.targets = targets
    }

    /// Describes a published event.
    ///
    /// - Parameters:
    ///   - event: The event, from ``ReachCore/ConnectivityMonitor/current`` or a subscription.
    ///   - likelyConnected: ``ReachCore/ConnectivityMonitor/isLikelyConnected``, read when the document is built.
    public init(event: ConnectivityEvent, likelyConnected: Bool, version: String = ReachVersion.current) {
        let verdict = event.verdict
        self.init(
            state: verdict.state.rawValue,
            reason: verdict.reason.code,
            reasonDetail: verdict.reasonDetail,
            since: RFC3339.string(from: verdict.since),
            likelyConnected: likelyConnected,
            sequence: event.sequence,
            reset: event.isReset,
            version: version,
            usableInterfaces: verdict.usableInterfaces,
            targets: verdict.targets.map(Target.init(status:)))
    }
}

extension StatusDocument.Target {
    init(status: TargetStatus) {
        // The last probe's failure; after a success, the failure that damping still holds the target down for.
        let failure = status.lastResult?.failure ?? (status.health == .unhealthy ? status.lastFailure : nil)
        let timings = status.lastResult?.timings
        self.init(
            name: status.name,
            kind: status.kind,
            health: status.health.rawValue,
            reason: failure?.reason.code,
            phase: failure?.phase?.rawValue,
            detail: failure.map { $0.detail ?? $0.reason.sentence },
            latencySeconds: status.lastResult?.latency.seconds,
            timings: StatusDocument.Timings(
                dnsSeconds: timings?.dns?.seconds,
                connectSeconds: timings?.connect?.seconds,
                tlsSeconds: timings?.tls?.seconds,
                firstByteSeconds: timings?.firstByte?.seconds,
                totalSeconds: timings?.total.seconds),
            lastCheckedAt: status.lastCheckedAt.map(RFC3339.string(from:)),
            consecutiveFailures: status.consecutiveFailures,
            consecutiveSuccesses: status.consecutiveSuccesses)
    }
}

extension Verdict {
    /// The reason in words, for `reason_detail`.
    var reasonDetail: String {
        switch reason {
        case .starting: return "reachd has just started and has no evidence yet"
        case .awaitingProbe: return "a usable link exists; waiting for the targets to answer on it"
        case .healthy: return "the targets answer as the policy requires"
        case .noLink: return "no network interface is up with carrier"
        case .noAddress: return "an interface has carrier but no global address yet"
        case .noRoute: return "an interface has an address but no default route and no route to the targets"
        case .targetFailed(let target, let failureReason):
            var text = "target \(target): \(failureReason.sentence)"
            if let failure = targets.first(where: { $0.name == target })?.lastFailure, failure.reason == failureReason {
                if let phase = failure.phase { text += " (in the \(phase.rawValue) phase)" }
                if let detail = failure.detail, !detail.isEmpty { text += ": \(detail)" }
            }
            return text
        }
    }
}

extension FailureReason {
    /// The failure in words.
    var sentence: String {
        switch self {
        case .dnsFailure: "the host name did not resolve"
        case .connectionRefused: "connection refused"
        case .timeout: "timed out"
        case .tlsFailure: "TLS handshake failed"
        case .httpStatus(let status): "unexpected HTTP status \(status)"
        case .unexpectedBody: "the response body was not as expected"
        case .networkUnreachable: "no route to the target's network or host"
        case .connectionReset: "the connection was reset"
        case .cancelled: "the probe was cancelled"
        case .protocolError: "the server did not speak the expected protocol"
        case .notServing: "the server reports itself not serving"
        }
    }
}

extension Duration {
    /// Seconds with a fraction, for JSON and Prometheus.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
