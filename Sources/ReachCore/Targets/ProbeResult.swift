import ReachSupport

/// Why a probe failed, named so that a person reading a log line or a dashboard knows what to fix.
public enum FailureReason: Sendable, Hashable, CustomStringConvertible {
    /// The target's host name did not resolve.
    case dnsFailure
    /// Nothing listens on the target's port (TCP RST to the SYN).
    case connectionRefused
    /// The probe's deadline passed; ``ProbeFailure/phase`` says where it was stuck.
    case timeout
    /// The TLS handshake failed: untrusted or expired certificate, name mismatch, protocol mismatch.
    case tlsFailure
    /// The server answered with a status outside the expected set.
    case httpStatus(Int)
    /// The status was fine but the body did not contain what the target expects.
    case unexpectedBody
    /// No route to the target's network or host.
    case networkUnreachable
    /// The connection was reset or closed mid-exchange.
    case connectionReset
    /// The probe was cancelled before it finished (shutdown, link loss).
    case cancelled
    /// The server answered with something that is not the protocol spoken (garbage instead of HTTP,
    /// a gRPC error status, ...).
    case protocolError
    /// The server answered and reports itself unhealthy: gRPC health `NOT_SERVING` or `SERVICE_UNKNOWN`.
    case notServing
    /// A resolver answered that the name does not exist (`NXDOMAIN`).
    case nxdomain
    /// A resolver answered that it could not answer (`SERVFAIL`): its upstream or DNSSEC failed.
    case servfail
    /// A resolver refused the question (`REFUSED`): it does not serve this machine or this name.
    case dnsRefused
    /// This host has no resolver to ask: no `nameserver` in its resolver configuration.
    case noResolver
    /// A resolver's answer was cut short (truncated over UDP and not had over TCP, or a TCP
    /// stream that ended mid-message).
    case truncatedAnswer
    /// A resolver's answer could not be read: a header, name or record out of bounds, a
    /// compression loop, an answer to another question.
    case malformedAnswer
    /// A resolver answered, but not as the target expects (`expect.rcode`, `expect.answer_contains`,
    /// or no record of the asked type).
    case unexpectedAnswer
    /// This machine does not allow the probe: ICMP echo needs reachd's group in
    /// `net.ipv4.ping_group_range`. Not a network fault: the verdict names none.
    case notPermitted
    /// A router (the failure's `reportedBy`) answered an echo with ICMP destination unreachable.
    case destinationUnreachable
    /// A router (the failure's `reportedBy`) answered an echo with ICMP time exceeded: a routing loop,
    /// or a path longer than the packet's hop limit.
    case timeExceeded

    /// A stable snake_case name: the value of `reason` in JSON, metrics labels and log fields.
    public var code: String {
        switch self {
        case .dnsFailure: "dns_failure"
        case .connectionRefused: "connection_refused"
        case .timeout: "timeout"
        case .tlsFailure: "tls_failure"
        case .httpStatus: "http_status"
        case .unexpectedBody: "unexpected_body"
        case .networkUnreachable: "network_unreachable"
        case .connectionReset: "connection_reset"
        case .cancelled: "cancelled"
        case .protocolError: "protocol_error"
        case .notServing: "not_serving"
        case .nxdomain: "nxdomain"
        case .servfail: "servfail"
        case .dnsRefused: "dns_refused"
        case .noResolver: "no_resolver"
        case .truncatedAnswer: "truncated_answer"
        case .malformedAnswer: "malformed_answer"
        case .unexpectedAnswer: "unexpected_answer"
        case .notPermitted: "not_permitted"
        case .destinationUnreachable: "destination_unreachable"
        case .timeExceeded: "time_exceeded"
        }
    }

    /// The failure `code` names (`httpStatus` completes `http_status`); `nil` for a code this version does not know.
    public init?(code: String, httpStatus: Int? = nil) {
        let all: [FailureReason] = [
            .dnsFailure, .connectionRefused, .timeout, .tlsFailure, .httpStatus(httpStatus ?? 0), .unexpectedBody,
            .networkUnreachable,
            .connectionReset, .cancelled, .protocolError, .notServing, .nxdomain, .servfail, .dnsRefused, .noResolver,
            .truncatedAnswer, .malformedAnswer, .unexpectedAnswer, .notPermitted, .destinationUnreachable,
            .timeExceeded,
        ]
        guard let reason = all.first(where: { $0.code == code }) else { return nil }
        self = reason
    }

    public var description: String {
        if case .httpStatus(let status) = self { return "http_status(\(status))" }
        return code
    }
}

/// Where in the exchange a probe was when it failed or ran out of time.
public enum ProbePhase: String, Sendable, Hashable, CaseIterable {
    case dns
    case connect
    case tls
    /// Waiting for the response head (the first byte).
    case head
    /// Reading the response body.
    case body
}

/// How long each phase of a probe took, where the probe could measure it.
public struct ProbeTimings: Sendable, Hashable {
    public var dns: Duration?
    public var connect: Duration?
    public var tls: Duration?
    public var firstByte: Duration?
    /// Start to finish, successful or not.
    public var total: Duration

    public init(
        dns: Duration? = nil,
        connect: Duration? = nil,
        tls: Duration? = nil,
        firstByte: Duration? = nil,
        total: Duration
    ) {
        self.dns = dns
        self.connect = connect
        self.tls = tls
        self.firstByte = firstByte
        self.total = total
    }
}

/// A failed probe's reason, the phase it failed in, and a human-readable detail
/// (the TLS verifier's complaint, the body that did not match).
public struct ProbeFailure: Sendable, Hashable {
    /// The longest detail kept, in characters. A detail can quote what the server sent, and it is
    /// copied into every kept event, status answer, stream frame and log line: a hostile target
    /// must not make those large, nor put terminal escapes in them (control characters become �).
    public static let detailLimit = 256

    public var reason: FailureReason
    public var phase: ProbePhase?
    public var detail: String? {
        didSet { detail = detail.map(Self.bounded) }
    }
    /// The `Location` of a redirect (an `http_status` 3xx answer): where a captive portal sends
    /// people to sign in. Bounded as ``detail`` is.
    public var location: String? {
        didSet { location = location.map(Self.bounded) }
    }
    /// The router that reported the failure: the source of an ICMP destination unreachable or
    /// time exceeded answering an echo (`reported_by` in the status document).
    package var reportedBy: IPAddress?

    public init(_ reason: FailureReason, phase: ProbePhase? = nil, detail: String? = nil, location: String? = nil) {
        self.reason = reason
        self.phase = phase
        self.detail = detail.map(Self.bounded)
        self.location = location.map(Self.bounded)
    }

    private static func bounded(_ detail: String) -> String {
        // Nearly every detail is short printable ASCII, which needs neither cutting nor cleaning.
        if detail.utf8.count <= detailLimit, detail.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) { return detail }
        var scalars = String.UnicodeScalarView()
        for scalar in detail.prefix(detailLimit).unicodeScalars {
            scalars.append(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) ? "\u{FFFD}" : scalar)
        }
        let clean = String(scalars)
        return detail.count <= detailLimit ? clean : clean.prefix(detailLimit - 1) + "…"
    }
}

/// The outcome of probing one target once.
public struct ProbeResult: Sendable, Hashable {
    /// The target's configured name.
    public var target: String
    /// `nil` when the probe succeeded.
    public var failure: ProbeFailure?
    public var timings: ProbeTimings
    /// The chain a TLS probe was presented, when it got as far as a certificate (an expired one included).
    public var certificate: ServerCertificate?
    /// An `icmp` probe's burst: echoes sent and answered, and their round trips; `nil` for other kinds.
    package var echoes: EchoStatistics?
    /// The resolver a `dns` probe's result is about: the one that answered, else the last one asked;
    /// `nil` for other kinds, and when there was none to ask.
    package var resolver: HostPort?

    public init(
        target: String,
        failure: ProbeFailure? = nil,
        timings: ProbeTimings,
        certificate: ServerCertificate? = nil
    ) {
        self.target = target
        self.failure = failure
        self.timings = timings
        self.certificate = certificate
    }

    public static func success(_ target: String, latency: Duration) -> ProbeResult {
        ProbeResult(target: target, timings: ProbeTimings(total: latency))
    }

    public static func failure(
        _ target: String,
        _ reason: FailureReason,
        phase: ProbePhase? = nil,
        detail: String? = nil,
        latency: Duration
    ) -> ProbeResult {
        ProbeResult(
            target: target,
            failure: ProbeFailure(reason, phase: phase, detail: detail),
            timings: ProbeTimings(total: latency)
        )
    }

    public var isSuccess: Bool { failure == nil }
    public var latency: Duration { timings.total }
}
