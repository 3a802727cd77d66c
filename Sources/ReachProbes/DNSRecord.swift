import ReachCore
import ReachSupport

/// One resource record of an answer: its owner name, type, class, TTL and data, the data read as
/// its type says for the types a `dns` target asks for (and OPT), and kept as bytes for any other.
package struct DNSRecord: Sendable, Hashable {
    package var name: String
    package var type: UInt16
    package var recordClass: UInt16
    package var ttl: UInt32
    package var data: DNSRecordData

    /// EDNS's pseudo-record (RFC 6891).
    package static let optType: UInt16 = 41
}

/// A record's data, read by type.
package enum DNSRecordData: Sendable, Hashable {
    /// A and AAAA.
    case address(IPAddress)
    /// CNAME, NS and PTR: a name.
    case name(String)
    case mailExchange(preference: UInt16, exchange: String)
    /// TXT: its character strings.
    case text([[UInt8]])
    case service(priority: UInt16, weight: UInt16, port: UInt16, target: String)
    case startOfAuthority(
        primary: String,
        mailbox: String,
        serial: UInt32,
        refresh: UInt32,
        retry: UInt32,
        expire: UInt32,
        minimum: UInt32
    )
    /// Any other type, OPT included: the bytes.
    case other([UInt8])

    /// The data as dig prints it (RFC 1035's presentation format; names without the final dot,
    /// TXT strings run together as SPF reads them, unknown types as RFC 3597's `\# length hex`).
    package var text: String {
        switch self {
        case .address(let address): "\(address)"
        case .name(let name): name
        case .mailExchange(let preference, let exchange): "\(preference) \(exchange)"
        case .text(let strings): strings.map { DNSName.escaped($0, keepingSpaces: true) }.joined()
        case .service(let priority, let weight, let port, let target): "\(priority) \(weight) \(port) \(target)"
        case .startOfAuthority(let primary, let mailbox, let serial, let refresh, let retry, let expire, let minimum):
            "\(primary) \(mailbox) \(serial) \(refresh) \(retry) \(expire) \(minimum)"
        case .other(let bytes):
            "\\# \(bytes.count)" + (bytes.isEmpty ? "" : " " + bytes.map { DNSName.hex($0) }.joined())
        }
    }
}
