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

    /// reachd's RFC 3339 time (`2026-11-23T14:32:36.123Z`, UTC, fraction optional); the epoch when
    /// reachd sent something else. Parsed by hand: a date formatter would load ICU on the
    /// cooperative pool at the first event.
    static func wallTime(_ text: String) -> WallTime {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes.count >= 20, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19), bytes.last == UInt8(ascii: "Z")
        else { return WallTime(sinceEpoch: .zero) }
        var nanoseconds: Int64 = 0
        if bytes[19] == UInt8(ascii: "."), let fraction = number(20..<(bytes.count - 1)) {
            let digits = bytes.count - 21
            nanoseconds = digits <= 9 ? fraction * Int64(pow10(9 - digits)) : fraction / Int64(pow10(digits - 9))
        }
        // Days from the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return WallTime(sinceEpoch: .seconds(days * 86_400 + hour * 3_600 + minute * 60 + second) + .nanoseconds(nanoseconds))
    }

    private static func pow10(_ exponent: Int) -> Int {
        (0..<exponent).reduce(1) { result, _ in result * 10 }
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
