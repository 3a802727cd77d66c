import ReachCore
import ReachSupport

/// The keys of `dns` and `icmp` targets.
extension ConfigurationParser {
    static let dnsKeys = ["query", "type", "server", "transport"]
    static let icmpKeys = ["host", "packets"]
    static let packetsRange = 1...100

    /// A `dns` target's check from its keys, every problem reported with its position.
    mutating func dnsCheck(_ entries: [String: ConfigNode], at node: ConfigNode) -> DNSCheck? {
        forbidOtherKeys(in: entries, kind: "dns")
        guard let queryNode = entries["query"] else {
            reader.report("missing query: the name to ask for, like api.example.com", at: node)
            return nil
        }
        guard let query = reader.string(queryNode, expected: "a name, like api.example.com") else { return nil }
        let recordType =
            entries["type"].flatMap { typeNode -> DNSRecordType? in
                let names = DNSRecordType.allCases.map(\.rawValue)
                guard let text = reader.scalar(typeNode, expected: "one of \(names.joined(separator: ", "))") else {
                    return nil
                }
                guard let type = DNSRecordType(rawValue: text.uppercased()) else {
                    reader.report("expected one of \(names.joined(separator: ", ")), found \"\(text)\"", at: typeNode)
                    return nil
                }
                return type
            } ?? .a
        let isReverseAddress = recordType == .ptr && IPAddress(query) != nil
        if !isReverseAddress, let problem = DNSCheck.problem(withQuery: query) {
            reader.report(problem, at: queryNode)
        }
        var check = DNSCheck(
            query: query.count > 1 && query.hasSuffix(".") ? String(query.dropLast()) : query,
            recordType: recordType
        )
        if let serverNode = entries["server"] {
            check.server = dnsServer(serverNode)
        }
        if let transportNode = entries["transport"],
            let transport = reader.choice(transportNode, of: DNSCheck.Transport.allCases.map(\.rawValue))
        {
            check.transport = DNSCheck.Transport(rawValue: transport) ?? .udp
        }
        if let expectNode = entries["expect"], let expectation = dnsExpectation(expectNode) {
            check.expectation = expectation
        }
        return check
    }

    /// `server`: an address, with a port or without (53): a resolver is asked by address, not by a
    /// name it would have to resolve itself.
    private mutating func dnsServer(_ node: ConfigNode) -> HostPort? {
        let expected = "a resolver's address, like 10.0.0.53 or [2001:db8::53]:5353"
        guard let text = reader.string(node, expected: expected) else { return nil }
        let (host, portText) = HostPort.split(text[...])
        let port = portText.map { Int($0) } ?? 53
        guard let port, (1...65535).contains(port), IPAddress(host) != nil else {
            reader.report("\"\(text)\" is not \(expected) (a port from 1 to 65535)", at: node)
            return nil
        }
        return HostPort(host: String(host), port: port)
    }

    /// `expect: { rcode, answer_contains }`.
    private mutating func dnsExpectation(_ node: ConfigNode) -> DNSExpectation? {
        guard let entries = reader.mapping(node, keys: ["rcode", "answer_contains"]) else { return nil }
        var expectation = DNSExpectation()
        if let rcodeNode = entries["rcode"],
            let text = reader.scalar(rcodeNode, expected: "a response code like NOERROR or NXDOMAIN")
        {
            if let code = DNSResponseCode(name: text) {
                expectation.responseCode = code
            } else {
                reader.report(
                    "expected one of \(DNSResponseCode.knownNames.joined(separator: ", ")), found \"\(text)\"",
                    at: rcodeNode
                )
            }
        }
        if let containsNode = entries["answer_contains"] {
            expectation.answerContains = reader.string(containsNode, expected: "text a record of the answer must hold")
        }
        if expectation.answerContains != nil, expectation.responseCode != .noError,
            let containsNode = entries["answer_contains"]
        {
            reader.report(
                "answer_contains needs rcode NOERROR: an error answer holds no records to look in",
                at: containsNode
            )
        }
        return expectation
    }

    /// An `icmp` target's check from its keys.
    mutating func icmpCheck(_ entries: [String: ConfigNode], at node: ConfigNode) -> ICMPCheck? {
        forbidOtherKeys(in: entries, kind: "icmp")
        guard let hostNode = entries["host"] else {
            reader.report("missing host: the address or name to send echoes to, like 10.0.0.1", at: node)
            return nil
        }
        guard let host = reader.string(hostNode, expected: "an address or a host name, like 10.0.0.1") else {
            return nil
        }
        if IPAddress(host) == nil, HostPort.split(host[...]).port != nil || host.contains("/") {
            reader.report("\"\(host)\" is not an address or a host name (ICMP has no port)", at: hostNode)
            return nil
        }
        let packets =
            entries["packets"].flatMap { reader.integer($0, in: Self.packetsRange) } ?? ICMPCheck.defaultPackets
        return ICMPCheck(host: host, packets: packets)
    }

    /// Reports the keys of the other kinds in a `dns` or `icmp` target (an icmp target has no `expect`).
    private mutating func forbidOtherKeys(in entries: [String: ConfigNode], kind: String) {
        let others = ["url", "address", "service", "watch", "tls"] + (kind == "icmp" ? ["expect"] : [])
        forbid(others, in: entries, because: "it does not apply to \(kind) targets")
        forbid(
            ["headers", "bearer_token_file", "bearer_token_credential"],
            in: entries,
            because: "it applies to http targets only"
        )
    }
}
