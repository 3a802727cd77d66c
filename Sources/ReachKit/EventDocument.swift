import Foundation
import ReachCore

/// The part of reachd's status document (the `data` of each `/v1/events` event, and
/// `GET /v1/status`) that a program's service needs, decoded without reachd's server module, so
/// that a program does not link an HTTP server to read a stream.
///
/// Keys are reachd's stable snake_case keys; new keys reachd adds are ignored.
struct EventDocument: Decodable, Sendable {
    var state: String
    var reason: String
    var since: String
    var likelyConnected: Bool
    var sequence: UInt64
    var reset: Bool
    var usableInterfaces: [String]
    var targets: [Target]

    struct Target: Decodable, Sendable {
        var name: String
        var kind: String
        var health: String
        var reason: String?
        var detail: String?
    }

    enum CodingKeys: String, CodingKey {
        case state, reason, since, sequence, reset, targets
        case likelyConnected = "likely_connected"
        case usableInterfaces = "usable_interfaces"
    }

    static func decode(_ text: String) throws -> EventDocument {
        try JSONDecoder().decode(EventDocument.self, from: Data(text.utf8))
    }

    /// The verdict reachd described.
    var verdict: ServiceVerdict {
        let targets = targets.map { target in
            var status = TargetStatus(name: target.name, kind: target.kind, health: TargetHealth(rawValue: target.health) ?? .unknown)
            if let code = target.reason {
                status.lastFailure = ProbeFailure(FailureReason(code: code, detail: target.detail), detail: target.detail)
            }
            return status
        }
        return ServiceVerdict(
            state: ConnectivityState(rawValue: state) ?? .unknown, reason: .monitor(verdictReason), since: Self.wallTime(since),
            usableInterfaces: usableInterfaces, targets: targets)
    }

    private var verdictReason: VerdictReason {
        switch reason {
        case "starting": return .starting
        case "awaiting_probe": return .awaitingProbe
        case "healthy": return .healthy
        case "no_link": return .noLink
        case "no_address": return .noAddress
        case "no_route": return .noRoute
        default:
            // A target's failure: the first unhealthy target with that failure, as reachd chose it.
            let target = targets.first { $0.health == "unhealthy" && $0.reason == reason } ?? targets.first { $0.health == "unhealthy" }
            return .targetFailed(target: target?.name ?? "", reason: FailureReason(code: reason, detail: target?.detail))
        }
    }

    /// RFC 3339 with or without fractional seconds; the epoch when reachd sent something else.
    private static func wallTime(_ text: String) -> WallTime {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text) ?? Date(timeIntervalSince1970: 0)
        return WallTime(sinceEpoch: .milliseconds(Int64((date.timeIntervalSince1970 * 1000).rounded())))
    }
}

extension FailureReason {
    /// The reason for a stable code reachd sent; `protocol_error` for one this version does not know.
    init(code: String, detail: String?) {
        switch code {
        case "dns_failure": self = .dnsFailure
        case "connection_refused": self = .connectionRefused
        case "timeout": self = .timeout
        case "tls_failure": self = .tlsFailure
        case "http_status":
            // reachd's detail names the status ("HTTP 503 ..."): its first three-digit number.
            let digits = detail?.split { !$0.isNumber }.first { $0.count == 3 }
            self = .httpStatus(digits.flatMap { Int(String($0)) } ?? 0)
        case "unexpected_body": self = .unexpectedBody
        case "network_unreachable": self = .networkUnreachable
        case "connection_reset": self = .connectionReset
        case "cancelled": self = .cancelled
        case "not_serving": self = .notServing
        default: self = .protocolError
        }
    }
}
