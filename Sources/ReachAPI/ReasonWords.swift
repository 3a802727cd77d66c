import ReachCore

/// A reason code and what it means, in the words each reader needs: the one table behind every
/// sentence reachd shows a person, so that `reachctl`, the status document, systemd's status line
/// and the desktop notification never say one reason two ways.
///
/// Codes are stable (they are the `reason` of the status document, metric labels and log fields);
/// words may be improved.
package struct ReasonWords: Sendable, Hashable {
    /// The stable snake_case code: ``ReachCore/VerdictReason/code`` or ``ReachCore/FailureReason/code``.
    package let code: String
    /// A few words read at a glance, as in systemd's status line: `refused`, `no link`, `HTTP 503`.
    package let phrase: String
    /// A clause that completes "target server: …" or stands as `reason_detail`: `connection refused`.
    package let clause: String
    /// A sentence for a person at the desktop, without the full stop: `The server refused the connection`.
    package let sentence: String
    /// Whether the reason is this machine's link rather than any target's failure.
    package let isLinkReason: Bool

    /// Words for a code this table does not know (one from a newer reachd): the code itself, spaced.
    package static func unknown(_ code: String) -> ReasonWords {
        let spaced = code.replacing("_", with: " ")
        return ReasonWords(
            code: code,
            phrase: spaced,
            clause: spaced,
            sentence: "The server cannot be reached (\(spaced))",
            isLinkReason: false
        )
    }

    /// The words for `code`; ``unknown(_:)``'s for a code this version does not know. For
    /// `http_status`, `httpStatus` names the status in the phrase and the clause.
    package static func of(code: String, httpStatus: Int? = nil) -> ReasonWords {
        guard let words = table[code] else { return unknown(code) }
        guard code == FailureReason.httpStatus(0).code, let httpStatus else { return words }
        return ReasonWords(
            code: code,
            phrase: "HTTP \(httpStatus)",
            clause: "unexpected HTTP status \(httpStatus)",
            sentence: words.sentence,
            isLinkReason: false
        )
    }

    /// Every code reachd publishes, in the order a person would read them: the verdict's own, then a target's.
    package static let all: [ReasonWords] = [
        ReasonWords(
            code: "starting",
            phrase: "no evidence yet",
            clause: "reachd has just started and has no evidence yet",
            sentence: "Checking whether the server can be reached",
            isLinkReason: false
        ),
        ReasonWords(
            code: "awaiting_probe",
            phrase: "awaiting the first probe",
            clause: "a usable link exists; waiting for the targets to answer on it",
            sentence: "Checking whether the server can be reached",
            isLinkReason: false
        ),
        ReasonWords(
            code: "healthy",
            phrase: "healthy",
            clause: "the targets answer as the policy requires",
            sentence: "The server can be reached",
            isLinkReason: false
        ),
        ReasonWords(
            code: "no_link",
            phrase: "no link",
            clause: "no network interface is up with carrier",
            sentence: "No network connection is active (no cable or Wi-Fi link)",
            isLinkReason: true
        ),
        ReasonWords(
            code: "no_address",
            phrase: "no address",
            clause: "an interface has carrier but no global address yet",
            sentence: "The network has not given this computer an address yet",
            isLinkReason: true
        ),
        ReasonWords(
            code: "no_route",
            phrase: "no route",
            clause: "an interface has an address but no default route and no route to the targets",
            sentence: "This computer has no route to the server",
            isLinkReason: true
        ),
        ReasonWords(
            code: "captive_portal",
            phrase: "captive portal",
            clause: "a captive portal holds the connection until someone signs in",
            sentence: "Sign in to the network: its login page answers in the server's place",
            isLinkReason: false
        ),
        ReasonWords(
            code: "dns_failure",
            phrase: "name not resolved",
            clause: "the host name did not resolve",
            sentence: "The server's name could not be looked up",
            isLinkReason: false
        ),
        ReasonWords(
            code: "connection_refused",
            phrase: "refused",
            clause: "connection refused",
            sentence: "The server refused the connection",
            isLinkReason: false
        ),
        ReasonWords(
            code: "timeout",
            phrase: "timed out",
            clause: "timed out",
            sentence: "The server did not answer in time",
            isLinkReason: false
        ),
        ReasonWords(
            code: "tls_failure",
            phrase: "TLS failed",
            clause: "TLS handshake failed",
            sentence: "A secure connection to the server could not be set up",
            isLinkReason: false
        ),
        ReasonWords(
            code: "http_status",
            phrase: "HTTP error",
            clause: "unexpected HTTP status",
            sentence: "The server answered with an error",
            isLinkReason: false
        ),
        ReasonWords(
            code: "unexpected_body",
            phrase: "unexpected answer",
            clause: "the response body was not as expected",
            sentence: "The server's answer was not what was expected",
            isLinkReason: false
        ),
        ReasonWords(
            code: "network_unreachable",
            phrase: "unreachable",
            clause: "no route to the target's network or host",
            sentence: "There is no route to the server's network",
            isLinkReason: false
        ),
        ReasonWords(
            code: "connection_reset",
            phrase: "connection reset",
            clause: "the connection was reset",
            sentence: "The connection to the server was cut off",
            isLinkReason: false
        ),
        ReasonWords(
            code: "cancelled",
            phrase: "cancelled",
            clause: "the probe was cancelled",
            sentence: "The check of the server was cancelled",
            isLinkReason: false
        ),
        ReasonWords(
            code: "protocol_error",
            phrase: "protocol error",
            clause: "the server did not speak the expected protocol",
            sentence: "The server did not answer in the expected protocol",
            isLinkReason: false
        ),
        ReasonWords(
            code: "not_serving",
            phrase: "not serving",
            clause: "the server reports itself not serving",
            sentence: "The server says it is not serving",
            isLinkReason: false
        ),
        ReasonWords(
            code: "nxdomain",
            phrase: "no such name",
            clause: "the resolver answered that the name does not exist (NXDOMAIN)",
            sentence: "The name does not exist, the resolver says",
            isLinkReason: false
        ),
        ReasonWords(
            code: "servfail",
            phrase: "resolver failed",
            clause: "the resolver could not answer (SERVFAIL)",
            sentence: "The name server could not look the name up",
            isLinkReason: false
        ),
        ReasonWords(
            code: "dns_refused",
            phrase: "resolver refused",
            clause: "the resolver refused the question (REFUSED)",
            sentence: "The name server refused to look the name up",
            isLinkReason: false
        ),
        ReasonWords(
            code: "no_resolver",
            phrase: "no resolver",
            clause: "this host has no resolver to ask",
            sentence: "This computer has no name server to ask",
            isLinkReason: false
        ),
        ReasonWords(
            code: "truncated_answer",
            phrase: "answer truncated",
            clause: "the resolver's answer was cut short",
            sentence: "The name server's answer was cut short",
            isLinkReason: false
        ),
        ReasonWords(
            code: "malformed_answer",
            phrase: "answer malformed",
            clause: "the resolver's answer could not be read",
            sentence: "The name server's answer could not be read",
            isLinkReason: false
        ),
        ReasonWords(
            code: "unexpected_answer",
            phrase: "unexpected answer",
            clause: "the resolver's answer was not as expected",
            sentence: "The name server's answer was not what was expected",
            isLinkReason: false
        ),
        ReasonWords(
            code: "not_permitted",
            phrase: "not permitted",
            clause: "this machine does not allow the probe (ICMP echo outside net.ipv4.ping_group_range)",
            sentence: "This computer does not allow reachd to send pings",
            isLinkReason: false
        ),
        ReasonWords(
            code: "destination_unreachable",
            phrase: "unreachable",
            clause: "a router answered that the destination is unreachable",
            sentence: "A router on the way says the server cannot be reached",
            isLinkReason: false
        ),
        ReasonWords(
            code: "time_exceeded",
            phrase: "time exceeded",
            clause: "a router answered that the packets' hop limit ran out (a routing loop?)",
            sentence: "The packets to the server went round in circles",
            isLinkReason: false
        ),
    ]

    private static let table = Dictionary(uniqueKeysWithValues: all.map { ($0.code, $0) })
}

extension FailureReason {
    /// This failure's words; the status named for `http_status`.
    package var words: ReasonWords {
        if case .httpStatus(let status) = self { return .of(code: code, httpStatus: status) }
        return .of(code: code)
    }
}

extension VerdictReason {
    /// This reason's words: for a target's failure, the failure's.
    package var words: ReasonWords {
        if case .targetFailed(_, let failure) = self { return failure.words }
        return .of(code: code)
    }
}
