import ReachCore

/// The status API's one answer, as JSON: `GET /v1/status`, `POST /v1/check`, and the `data` of
/// every Server-Sent Event.
///
/// Scripts, dashboards and `reachctl` parse this, so the keys are snake_case and stable: new keys may
/// be added, existing ones keep their name, type and meaning. Unknown values are `null`, never a
/// missing key, so a reader can tell "not known" from "renamed". Nothing secret appears here: the
/// verdict carries target names and results, never URLs, headers or tokens.
package struct StatusDocument: Codable, Sendable, Hashable {
    /// `connected`, `disconnected` or `unknown`.
    package var state: String
    /// A stable code for why (``ReachCore/VerdictReason/code``): `healthy`, `no_link`, `connection_refused`, ...
    package var reason: String
    /// The reason in words for a person, naming the failing target and its failure.
    package var reasonDetail: String
    /// The target whose failure is the reason (`server`); `null` when the reason is not a target's
    /// (the link's, or none). A program reads this rather than the words.
    package var target: String?
    /// Where the path breaks (``ReachCore/Fault``): `link`, `gateway`, `dns`, `upstream`, `server` or
    /// `portal`; `null` unless `state` is `disconnected` (and while reachd awaits its first probe).
    /// A program answers "is it us or the server?" from this, not from `reason`.
    package var fault: String?
    /// When `state` last changed, RFC 3339 in UTC with milliseconds.
    package var since: String
    /// ``ReachCore/ConnectivityMonitor/isLikelyConnected``: `connected` backed by a probe result no
    /// older than the next one is due (5 s at the least).
    package var likelyConnected: Bool
    /// The event number; an SSE client resumes after it with `Last-Event-ID`.
    package var sequence: UInt64
    /// Only meaningful in the event stream: the client's resume point was lost, so whatever it
    /// knew is void and this event starts over.
    package var reset: Bool
    /// reachd's version.
    package var version: String
    /// The interfaces that currently give a usable link, in index order.
    package var usableInterfaces: [String]
    /// Every target, in configuration order.
    package var targets: [Target]
    /// The captive portal: when the reason is `captive_portal`, or when the network's RFC 8908 API
    /// tells of a signed-in session (`captive: false`); `null` otherwise.
    package var portal: Portal?
    /// Each uplink's own reachability (`probe.per_interface`), in index order; empty when that is
    /// off or there is only one uplink. It does not change `state`, which follows the routes.
    package var interfaces: [Interface]
    /// The families (`ipv4`, `ipv6`) over which some target fails while it answers over the other:
    /// the union of the targets' `degraded_families`. `state` stays `connected`.
    package var degradedFamilies: [String]

    /// A captive portal: where to sign in, for how long the session lasts, and how reachd knows.
    package struct Portal: Codable, Sendable, Hashable {
        /// Whether the portal holds the traffic now (the reason is then `captive_portal`).
        package var captive: Bool
        /// Where a person signs in; `null` when unknown.
        package var userPortalURL: String?
        /// A page about the venue (the RFC 8908 API's `venue-info-url`).
        package var venueInfoURL: String?
        /// The session's remaining time, as the network's API last said.
        package var secondsRemaining: Int?
        /// The session's remaining data, as the network's API last said.
        package var bytesRemaining: Int?
        /// When the session ends, RFC 3339 in UTC: the API's answer's time plus `seconds_remaining`.
        package var sessionEndsAt: String?
        /// `rfc8908`, `redirect`, `check_url` or `tls_intercepted`.
        package var evidence: String
        /// The interface whose network's API told, for `rfc8908`.
        package var interface: String?

        package init(
            captive: Bool = true, userPortalURL: String? = nil, venueInfoURL: String? = nil, secondsRemaining: Int? = nil,
            bytesRemaining: Int? = nil, sessionEndsAt: String? = nil, evidence: String, interface: String? = nil
        ) {
            self.captive = captive
            self.sessionEndsAt = sessionEndsAt
            self.userPortalURL = userPortalURL
            self.venueInfoURL = venueInfoURL
            self.secondsRemaining = secondsRemaining
            self.bytesRemaining = bytesRemaining
            self.evidence = evidence
            self.interface = interface
        }

        enum CodingKeys: String, CodingKey {
            case captive
            case userPortalURL = "user_portal_url"
            case venueInfoURL = "venue_info_url"
            case secondsRemaining = "seconds_remaining"
            case bytesRemaining = "bytes_remaining"
            case sessionEndsAt = "session_ends_at"
            case evidence, interface
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(captive, forKey: .captive)
            try container.encode(userPortalURL, forKey: .userPortalURL)
            try container.encode(venueInfoURL, forKey: .venueInfoURL)
            try container.encode(secondsRemaining, forKey: .secondsRemaining)
            try container.encode(bytesRemaining, forKey: .bytesRemaining)
            try container.encode(sessionEndsAt, forKey: .sessionEndsAt)
            try container.encode(evidence, forKey: .evidence)
            try container.encode(interface, forKey: .interface)
        }
    }

    /// The certificate chain a TLS target presented.
    package struct Certificate: Codable, Sendable, Hashable {
        /// The earliest `notAfter` in the chain, RFC 3339 in UTC: when the server's TLS breaks.
        package var notAfter: String
        /// The leaf's subject, as `CN=api.example.com`.
        package var subject: String
        /// The leaf's issuer.
        package var issuer: String

        package init(notAfter: String, subject: String, issuer: String) {
            self.notAfter = notAfter
            self.subject = subject
            self.issuer = issuer
        }

        enum CodingKeys: String, CodingKey {
            case notAfter = "not_after"
            case subject, issuer
        }
    }

    /// What reachd knows about one target.
    package struct Target: Codable, Sendable, Hashable {
        package var name: String
        /// `http`, `tcp` or `grpc`.
        package var kind: String
        /// `healthy`, `unhealthy` or `unknown` (no result on the current link yet).
        package var health: String
        /// The failure code of the last probe, or of the failure that holds the target down; `null` when healthy.
        package var reason: String?
        /// Where that probe failed: `dns`, `connect`, `tls`, `head` or `body`.
        package var phase: String?
        /// The prober's words on that failure (the TLS verifier's complaint, the HTTP status).
        package var detail: String?
        /// The status of the answer that failed the target, for `http_status`; otherwise `null`.
        package var httpStatus: Int?
        /// The last probe's duration, start to finish.
        package var latencySeconds: Double?
        package var timings: Timings
        /// When the last result arrived, RFC 3339 in UTC with milliseconds.
        package var lastCheckedAt: String?
        package var consecutiveFailures: Int
        package var consecutiveSuccesses: Int
        /// The chain the target's last TLS handshake presented; `null` for plain HTTP, TCP, or before one.
        package var certificate: Certificate?
        /// The families the target is checked over one at a time (a name with addresses of both);
        /// empty when it is not.
        package var families: [String]
        /// Of `families`, those whose last check answered.
        package var answeredFamilies: [String]
        /// Of `families`, those that fail while another answers.
        package var degradedFamilies: [String]

        package init(
            name: String, kind: String, health: String, reason: String? = nil, phase: String? = nil, detail: String? = nil,
            httpStatus: Int? = nil, latencySeconds: Double? = nil, timings: Timings = Timings(), lastCheckedAt: String? = nil,
            consecutiveFailures: Int = 0, consecutiveSuccesses: Int = 0, certificate: Certificate? = nil, families: [String] = [],
            answeredFamilies: [String] = [], degradedFamilies: [String] = []
        ) {
            self.certificate = certificate
            self.families = families
            self.answeredFamilies = answeredFamilies
            self.degradedFamilies = degradedFamilies
            self.name = name
            self.kind = kind
            self.health = health
            self.reason = reason
            self.phase = phase
            self.detail = detail
            self.httpStatus = httpStatus
            self.latencySeconds = latencySeconds
            self.timings = timings
            self.lastCheckedAt = lastCheckedAt
            self.consecutiveFailures = consecutiveFailures
            self.consecutiveSuccesses = consecutiveSuccesses
        }

        enum CodingKeys: String, CodingKey {
            case name, kind, health, reason, phase, detail
            case httpStatus = "http_status"
            case latencySeconds = "latency_seconds"
            case timings
            case lastCheckedAt = "last_checked_at"
            case consecutiveFailures = "consecutive_failures"
            case consecutiveSuccesses = "consecutive_successes"
            case certificate, families
            case answeredFamilies = "answered_families"
            case degradedFamilies = "degraded_families"
        }

        /// Writes every key, `null` included: a missing key would read as a schema change.
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(kind, forKey: .kind)
            try container.encode(health, forKey: .health)
            try container.encode(reason, forKey: .reason)
            try container.encode(phase, forKey: .phase)
            try container.encode(detail, forKey: .detail)
            try container.encode(httpStatus, forKey: .httpStatus)
            try container.encode(latencySeconds, forKey: .latencySeconds)
            try container.encode(timings, forKey: .timings)
            try container.encode(lastCheckedAt, forKey: .lastCheckedAt)
            try container.encode(consecutiveFailures, forKey: .consecutiveFailures)
            try container.encode(consecutiveSuccesses, forKey: .consecutiveSuccesses)
            try container.encode(certificate, forKey: .certificate)
            try container.encode(families, forKey: .families)
            try container.encode(answeredFamilies, forKey: .answeredFamilies)
            try container.encode(degradedFamilies, forKey: .degradedFamilies)
        }
    }

    /// How long each phase of the last probe took; `null` where the prober could not measure it.
    package struct Timings: Codable, Sendable, Hashable {
        package var dnsSeconds: Double?
        package var connectSeconds: Double?
        package var tlsSeconds: Double?
        package var firstByteSeconds: Double?
        /// `null` only before the first result.
        package var totalSeconds: Double?

        package init(
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

        package func encode(to encoder: any Encoder) throws {
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
        case target, fault
        case since
        case likelyConnected = "likely_connected"
        case sequence, reset, version
        case usableInterfaces = "usable_interfaces"
        case targets, portal, interfaces
        case degradedFamilies = "degraded_families"
    }

    /// Writes every key, `null` included: a missing key would read as a schema change.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state, forKey: .state)
        try container.encode(reason, forKey: .reason)
        try container.encode(reasonDetail, forKey: .reasonDetail)
        try container.encode(target, forKey: .target)
        try container.encode(fault, forKey: .fault)
        try container.encode(since, forKey: .since)
        try container.encode(likelyConnected, forKey: .likelyConnected)
        try container.encode(sequence, forKey: .sequence)
        try container.encode(reset, forKey: .reset)
        try container.encode(version, forKey: .version)
        try container.encode(usableInterfaces, forKey: .usableInterfaces)
        try container.encode(targets, forKey: .targets)
        try container.encode(portal, forKey: .portal)
        try container.encode(interfaces, forKey: .interfaces)
        try container.encode(degradedFamilies, forKey: .degradedFamilies)
    }

    package init(
        state: String, reason: String, reasonDetail: String, target: String? = nil, fault: String? = nil, since: String, likelyConnected: Bool, sequence: UInt64,
        reset: Bool = false, version: String = ReachVersion.current, usableInterfaces: [String] = [], targets: [Target] = [],
        portal: Portal? = nil, interfaces: [Interface] = [], degradedFamilies: [String] = []
    ) {
        self.portal = portal
        self.interfaces = interfaces
        self.degradedFamilies = degradedFamilies
        self.state = state
        self.reason = reason
        self.reasonDetail = reasonDetail
        self.target = target
        self.fault = fault
        self.since = since
        self.likelyConnected = likelyConnected
        self.sequence = sequence
        self.reset = reset
        self.version = version
        self.usableInterfaces = usableInterfaces
        self.targets = targets
    }
}
