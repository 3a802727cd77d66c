/// The record types a `dns` target may ask for: the ones a health check of a name needs, as dig
/// names them.
package enum DNSRecordType: String, Sendable, Hashable, CaseIterable {
    case a = "A"
    case aaaa = "AAAA"
    case cname = "CNAME"
    case mx = "MX"
    case txt = "TXT"
    case srv = "SRV"
    case ns = "NS"
    case soa = "SOA"
    case ptr = "PTR"

    /// The type's number on the wire (RFC 1035, 3596, 2782).
    package var code: UInt16 {
        switch self {
        case .a: 1
        case .ns: 2
        case .cname: 5
        case .soa: 6
        case .ptr: 12
        case .mx: 15
        case .txt: 16
        case .aaaa: 28
        case .srv: 33
        }
    }
}
