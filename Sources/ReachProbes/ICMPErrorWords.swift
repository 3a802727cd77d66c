import ReachCore
import ReachSupport

/// An ICMP error answering an echo, as a probe's failure: destination unreachable and time
/// exceeded (ICMP and ICMPv6) are their own reasons, with what the code says in words; any other
/// error is a `protocol_error` naming its type and code.
package enum ICMPErrorWords {
    package static func failure(_ report: ICMPReport.ErrorReport, family: IPFamily) -> ProbeFailure {
        let from = report.reporter.map { ", from \($0)" } ?? ""
        switch (family, report.type) {
        case (.ipv4, 3):
            return ProbeFailure(.destinationUnreachable, detail: unreachable4(report.code) + from)
        case (.ipv6, 1):
            return ProbeFailure(.destinationUnreachable, detail: unreachable6(report.code) + from)
        case (.ipv4, 11), (.ipv6, 3):
            let what =
                report.code == 0
                ? (family == .ipv4 ? "TTL" : "hop limit") + " exceeded in transit" : "fragment reassembly time exceeded"
            return ProbeFailure(.timeExceeded, detail: what + from)
        default:
            return ProbeFailure(
                .protocolError,
                detail: "ICMP\(family == .ipv6 ? "v6" : "") type \(report.type) code \(report.code)\(from)"
            )
        }
    }

    /// ICMP destination unreachable's codes (RFC 792, 1122, 1812).
    private static func unreachable4(_ code: UInt8) -> String {
        switch code {
        case 0, 6: "network unreachable"
        case 1, 7: "host unreachable"
        case 2: "protocol unreachable"
        case 3: "port unreachable"
        case 4: "fragmentation needed"
        case 9, 10, 13: "administratively prohibited"
        default: "unreachable (code \(code))"
        }
    }

    /// ICMPv6 destination unreachable's codes (RFC 4443).
    private static func unreachable6(_ code: UInt8) -> String {
        switch code {
        case 0: "no route to destination"
        case 1: "administratively prohibited"
        case 2: "beyond the scope of the source address"
        case 3: "address unreachable"
        case 4: "port unreachable"
        case 5: "source address failed policy"
        case 6: "reject route to destination"
        default: "unreachable (code \(code))"
        }
    }
}
