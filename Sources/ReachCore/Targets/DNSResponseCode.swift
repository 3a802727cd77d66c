/// A DNS answer's response code (RCODE, RFC 1035 and 6895), with EDNS's extended bits: what the
/// resolver says about the question before any record.
package struct DNSResponseCode: Sendable, Hashable, CustomStringConvertible {
    /// 0–4095: the header's four bits, and EDNS's eight above them.
    package var value: UInt16

    package init(_ value: UInt16) {
        self.value = value
    }

    package static let noError = DNSResponseCode(0)
    package static let formatError = DNSResponseCode(1)
    package static let serverFailure = DNSResponseCode(2)
    package static let nonExistentDomain = DNSResponseCode(3)
    package static let notImplemented = DNSResponseCode(4)
    package static let refused = DNSResponseCode(5)

    /// The mnemonics of RFC 6895's registry that an answer to a query can carry, as dig prints them.
    private static let names: [UInt16: String] = [
        0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED", 6: "YXDOMAIN",
        7: "YXRRSET", 8: "NXRRSET", 9: "NOTAUTH", 10: "NOTZONE", 16: "BADVERS", 23: "BADCOOKIE",
    ]

    /// The mnemonics a configuration may name, in registry order.
    package static let knownNames: [String] = names.keys.sorted().compactMap { names[$0] }

    /// The code a mnemonic names (`NXDOMAIN`, any case); `nil` for one the registry does not have.
    package init?(name: some StringProtocol) {
        let upper = name.uppercased()
        guard let value = Self.names.first(where: { $0.value == upper })?.key else { return nil }
        self.value = value
    }

    /// The mnemonic, or `RCODE<n>` for a code without one.
    package var description: String { Self.names[value] ?? "RCODE\(value)" }
}
