import ReachCore

/// The status API's one answer, as JSON: `GET /v1/status`, `POST /v1/check`, and the `data` of
/// every Server-Sent Event.
///
/// Scripts, dashboards and `reachctl` parse this, so the keys are snake_case and stable: new keys may
/// be added, existing ones keep their name, type and meaning. Unknown values are `null`, never a
/// missing key, so a reader can tell "not known" from "renamed". Nothing secret appears here: the
/// verdict carries target names and results, never URLs, headers or tokens.
///
/// A field is one property here (`@Nullable` when it may be unknown, `@AddedLater` for a list
/// older reachds did not write) and one coding key, plus `openapi.yaml` and the docs: the
/// synthesized coding writes and reads it, and the memberwise initializer takes it. One entry in
/// ``facts`` shows it on the status page and in `reachctl status`.
package struct StatusDocument: Codable, Sendable, Hashable {
    /// `connected`, `disconnected` or `unknown`.
    package var state: String
    /// A stable code for why (``ReachCore/VerdictReason/code``): `healthy`, `no_link`, `connection_refused`, ...
    package var reason: String
    /// The reason in words for a person, naming the failing target and its failure.
    package var reasonDetail: String
    /// The target whose failure is the reason (`server`); `null` when the reason is not a target's
    /// (the link's, or none). A program reads this rather than the words.
    @Nullable package var target: String? = nil
    /// Where the path breaks (``ReachCore/Fault``): `link`, `gateway`, `dns`, `upstream`, `server` or
    /// `portal`; `null` unless `state` is `disconnected` (and while reachd awaits its first probe).
    /// A program answers "is it us or the server?" from this, not from `reason`.
    @Nullable package var fault: String? = nil
    /// When `state` last changed, RFC 3339 in UTC with milliseconds.
    package var since: String
    /// ``ReachCore/ConnectivityMonitor/isLikelyConnected``: `connected` backed by a probe result no
    /// older than the next one is due (5 s at the least).
    package var likelyConnected: Bool
    /// The event number; an SSE client resumes after it with `Last-Event-ID`.
    package var sequence: UInt64
    /// Only meaningful in the event stream: the client's resume point was lost, so whatever it
    /// knew is void and this event starts over.
    package var reset: Bool = false
    /// reachd's version.
    package var version: String = ReachVersion.current
    /// The interfaces that currently give a usable link, in index order.
    package var usableInterfaces: [String] = []
    /// Every target, in configuration order.
    package var targets: [Target] = []
    /// The captive portal: when the reason is `captive_portal`, or when the network's RFC 8908 API
    /// tells of a signed-in session (`captive: false`); `null` otherwise.
    @Nullable package var portal: Portal? = nil
    /// Each uplink's own reachability (`probe.per_interface`), in index order; empty when that is
    /// off or there is only one uplink. It does not change `state`, which follows the routes.
    @AddedLater package var interfaces: [Interface] = []
    /// The families (`ipv4`, `ipv6`) over which some target fails while it answers over the other:
    /// the union of the targets' `degraded_families`. `state` stays `connected`.
    @AddedLater package var degradedFamilies: [String] = []
    /// How well the connection works, beside `state` (``Quality``): `null` unless `connected`
    /// with a target the policy counts judged, or when no target has a budget (`quality:`).
    @Nullable package var quality: Quality? = nil

    /// What the status page's verdict card and `reachctl status` show beside the state and the
    /// reason, in this order (``VerdictFact``).
    package static let facts = [
        VerdictFact(key: "target", label: "Failing target", inSummary: false) { $0.target.map { [$0] } ?? [] },
        VerdictFact(key: "fault", label: "Fault", words: VerdictFact.faultWords) { $0.fault.map { [$0] } ?? [] },
        VerdictFact(key: "quality.state", id: "quality", label: "Quality", words: VerdictFact.qualityWords) {
            $0.quality.map { [$0.state] } ?? []
        },
        VerdictFact(
            key: "degraded_families",
            id: "families",
            label: "Degraded address family",
            inSummary: false,
            words: VerdictFact.familyWords
        ) { $0.degradedFamilies },
    ]

    /// A captive portal: where to sign in, for how long the session lasts, and how reachd knows.
    package struct Portal: Codable, Sendable, Hashable {
        /// Whether the portal holds the traffic now (the reason is then `captive_portal`).
        package var captive: Bool = true
        /// Where a person signs in; `null` when unknown.
        @Nullable package var userPortalURL: String? = nil
        /// A page about the venue (the RFC 8908 API's `venue-info-url`).
        @Nullable package var venueInfoURL: String? = nil
        /// The session's remaining time, as the network's API last said.
        @Nullable package var secondsRemaining: Int? = nil
        /// The session's remaining data, as the network's API last said.
        @Nullable package var bytesRemaining: Int? = nil
        /// When the session ends, RFC 3339 in UTC: the API's answer's time plus `seconds_remaining`.
        @Nullable package var sessionEndsAt: String? = nil
        /// `rfc8908`, `redirect`, `check_url` or `tls_intercepted`.
        package var evidence: String
        /// The interface whose network's API told, for `rfc8908`.
        @Nullable package var interface: String? = nil

        enum CodingKeys: String, CodingKey {
            case captive
            case userPortalURL = "user_portal_url"
            case venueInfoURL = "venue_info_url"
            case secondsRemaining = "seconds_remaining"
            case bytesRemaining = "bytes_remaining"
            case sessionEndsAt = "session_ends_at"
            case evidence, interface
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

        enum CodingKeys: String, CodingKey {
            case notAfter = "not_after"
            case subject, issuer
        }
    }

    /// What reachd knows about one target.
    package struct Target: Codable, Sendable, Hashable {
        package var name: String
        /// `http`, `tcp`, `grpc`, `dns` or `icmp`.
        package var kind: String
        /// `healthy`, `unhealthy` or `unknown` (no result on the current link yet).
        package var health: String
        /// The failure code of the last probe, or of the failure that holds the target down; `null` when healthy.
        @Nullable package var reason: String? = nil
        /// Where that probe failed: `dns`, `connect`, `tls`, `head` or `body`.
        @Nullable package var phase: String? = nil
        /// The prober's words on that failure (the TLS verifier's complaint, the HTTP status).
        @Nullable package var detail: String? = nil
        /// The status of the answer that failed the target, for `http_status`; otherwise `null`.
        @Nullable package var httpStatus: Int? = nil
        /// The last probe's duration, start to finish.
        @Nullable package var latencySeconds: Double? = nil
        package var timings: Timings = Timings()
        /// When the last result arrived, RFC 3339 in UTC with milliseconds.
        @Nullable package var lastCheckedAt: String? = nil
        package var consecutiveFailures: Int = 0
        package var consecutiveSuccesses: Int = 0
        /// The chain the target's last TLS handshake presented; `null` for plain HTTP, TCP, or before one.
        @Nullable package var certificate: Certificate? = nil
        /// The families the target is checked over one at a time (a name with addresses of both);
        /// empty when it is not.
        @AddedLater package var families: [String] = []
        /// Of `families`, those whose last check answered.
        @AddedLater package var answeredFamilies: [String] = []
        /// Of `families`, those that fail while another answers.
        @AddedLater package var degradedFamilies: [String] = []
        /// A `dns` target's resolver the last probe's result is about (`host:port`): the one that
        /// answered, else the last one asked; `null` for other kinds.
        @Nullable package var resolver: String? = nil
        /// The router that answered an `icmp` target's echoes with an ICMP error (the reasons
        /// `destination_unreachable`, `time_exceeded`); `null` otherwise.
        @Nullable package var reportedBy: String? = nil
        /// An `icmp` target's last burst of echoes; `null` for other kinds.
        @Nullable package var echoes: Echoes? = nil
        /// Where the target is probed: its URL's or address's host (an IP address without brackets)
        /// and port, so that a program asking about a host and port can be answered from the
        /// target's health (reachd's GIO module). `null` from a reachd older than these keys.
        @Nullable package var host: String? = nil
        @Nullable package var port: Int? = nil
        /// The target's quality; `null` without a budget, or before its window holds enough samples.
        @Nullable package var quality: TargetQuality? = nil
        /// What its quality window shows now, and its budget; `null` for a target without a budget.
        @Nullable package var qualityWindow: QualityWindow? = nil

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
            case resolver
            case reportedBy = "reported_by"
            case echoes
            case host, port, quality
            case qualityWindow = "quality_window"
        }
    }

    /// How long each phase of the last probe took; `null` where the prober could not measure it.
    package struct Timings: Codable, Sendable, Hashable {
        @Nullable package var dnsSeconds: Double? = nil
        @Nullable package var connectSeconds: Double? = nil
        @Nullable package var tlsSeconds: Double? = nil
        @Nullable package var firstByteSeconds: Double? = nil
        /// `null` only before the first result.
        @Nullable package var totalSeconds: Double? = nil

        enum CodingKeys: String, CodingKey {
            case dnsSeconds = "dns_seconds"
            case connectSeconds = "connect_seconds"
            case tlsSeconds = "tls_seconds"
            case firstByteSeconds = "first_byte_seconds"
            case totalSeconds = "total_seconds"
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
        case quality
    }
}
