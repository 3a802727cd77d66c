import ReachSupport

/// A question to a resolver (`kind: dns`): does this name resolve, as expected, by the resolver
/// this host uses (or the one named)? Reachd asks it itself, one query a probe, and reads every
/// byte of the answer.
package struct DNSCheck: Sendable, Hashable {
    /// How the question travels.
    package enum Transport: String, Sendable, Hashable, CaseIterable {
        /// One datagram each way; a truncated answer is asked again over TCP, as resolvers do.
        case udp
        /// A TCP connection per query (RFC 7766 framing).
        case tcp
    }

    /// The name asked for, as written (without a final dot); for `PTR`, an address stands for its
    /// reverse name (``questionName``).
    package var query: String
    package var recordType: DNSRecordType
    /// The resolver to ask; `nil` asks the resolvers this host uses, found at each probe
    /// (``ResolverConfiguration``).
    package var server: HostPort?
    package var transport: Transport
    package var expectation: DNSExpectation

    package init(
        query: String,
        recordType: DNSRecordType = .a,
        server: HostPort? = nil,
        transport: Transport = .udp,
        expectation: DNSExpectation = DNSExpectation()
    ) {
        self.query = query
        self.recordType = recordType
        self.server = server
        self.transport = transport
        self.expectation = expectation
    }

    /// The name the question carries: ``query``, or for a `PTR` query written as an address, its
    /// reverse name (`192.0.2.1` → `1.2.0.192.in-addr.arpa`).
    package var questionName: String {
        guard recordType == .ptr, let address = IPAddress(query) else { return query }
        if address.family == .ipv4 {
            return address.networkBytes.reversed().map(String.init).joined(separator: ".") + ".in-addr.arpa"
        }
        let nibbles = address.networkBytes.flatMap { [$0 >> 4, $0 & 0xF] }
        return nibbles.reversed().map { String($0, radix: 16) }.joined(separator: ".") + ".ip6.arpa"
    }

    /// What the probe's link rules see: the server, or (asking the host's resolvers) a host that is
    /// neither an address nor loopback, so that such a target needs a usable link.
    package var endpoint: HostPort { server ?? HostPort(host: "", port: 53) }
}

extension DNSCheck {
    /// Why `name` cannot be asked, in words for a configuration problem; `nil` when it can: labels
    /// of 1–63 printable ASCII characters (no space or backslash), 253 characters in all, an
    /// optional final dot, `.` alone for the root.
    package static func problem(withQuery name: String) -> String? {
        guard name != "." else { return nil }
        let trimmed = name.hasSuffix(".") ? name.dropLast() : Substring(name)
        guard trimmed.unicodeScalars.allSatisfy(\.isASCII) else {
            return "\"\(name)\" is not ASCII: write an internationalized name in its xn-- form"
        }
        guard trimmed.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\\") }) else {
            return "\"\(name)\" holds a space, a control character or a backslash"
        }
        guard trimmed.utf8.count <= 253 else { return "\"\(name)\" is longer than a name's 253 characters" }
        let labels = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.allSatisfy({ (1...63).contains($0.utf8.count) }) else {
            return "\"\(name)\" has an empty label or one longer than 63 characters"
        }
        return nil
    }
}
