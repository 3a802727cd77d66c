import FoundationEssentials
import ReachCore
import ReachSupport

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP options of a target and of the `server` shorthand: headers, the bearer token, TLS and
/// what a healthy answer looks like; and the checks on target names.
extension ConfigurationParser {
    mutating func parseHeaders(_ node: ConfigNode) -> [HTTPHeaderField] {
        guard case .mapping(let mapping) = node.node else {
            reader.report(
                "expected a mapping of header names to values, like { X-Api-Key: abc }, found \(node.summary)",
                at: node
            )
            return []
        }
        var fields: [HTTPHeaderField] = []
        for (key, value) in mapping {
            let name = key.string ?? ""
            let valueNode = ConfigNode(node: value, path: node.child(name))
            let isToken =
                !name.isEmpty
                && name.unicodeScalars.allSatisfy {
                    $0.isASCII
                        && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_".unicodeScalars.contains($0))
                }
            guard isToken else {
                reader.report(
                    "\"\(name)\" is not a header name (letters, digits, \"-\", \"_\")",
                    path: node.child(name),
                    mark: key.mark
                )
                continue
            }
            if name.lowercased() == "authorization" {
                reader.report(
                    "put credentials in bearer_token_file or bearer_token_credential, where they stay out of the config file",
                    at: valueNode
                )
                continue
            }
            guard let text = reader.scalar(valueNode, expected: "the header's value"), !text.hasHeaderControlCharacter
            else {
                // The value is not quoted back: it may be a key.
                if case .scalar = value {
                    reader.report(
                        "a header value cannot contain a line break or another control character",
                        at: valueNode
                    )
                }
                continue
            }
            fields.append(HTTPHeaderField(name: name, value: text))
        }
        return fields
    }

    /// The bearer token, read now so that a missing or unreadable file is a configuration problem
    /// at start, not a stream of 401s later.
    mutating func parseBearerToken(_ entries: [String: ConfigNode]) -> Secret? {
        readSecret(
            entries,
            fileKey: "bearer_token_file",
            credentialKey: "bearer_token_credential",
            noun: "token",
            oneLine: true
        )
    }

    mutating func parseTLS(_ node: ConfigNode) -> TLSSettings? {
        guard let entries = reader.mapping(node, keys: ["ca_file", "server_name"]) else { return nil }
        var settings = TLSSettings()
        if let caNode = entries["ca_file"] { settings.caFile = parseCAFile(caNode) }
        if let nameNode = entries["server_name"] {
            settings.serverName = reader.string(nameNode, expected: "the host name the certificate is for")
        }
        return settings
    }

    /// A readable PEM CA bundle's path.
    mutating func parseCAFile(_ node: ConfigNode) -> String? {
        guard let path = reader.string(node, expected: "the path of a PEM CA bundle") else { return nil }
        var isDirectory = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory {
            reader.report("\(path) is a directory: name the PEM bundle file", at: node)
        } else if FileManager.default.isReadableFile(atPath: path) {
            return path
        } else {
            reader.report("cannot read the CA bundle \(path)", at: node)
        }
        return nil
    }

    mutating func forbid(_ keys: [String], in entries: [String: ConfigNode], because reason: String) {
        for key in keys {
            if let node = entries[key] { reader.report("not allowed here: \(reason)", at: node) }
        }
    }

    mutating func parseTargetName(_ node: ConfigNode) -> String? {
        guard let name = reader.string(node, expected: "a name") else { return nil }
        let allowed =
            name.count <= 64
            && name.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0))
            }
        guard allowed else {
            reader.report(
                "\"\(name)\" is not a valid name: use up to 64 letters, digits, \"-\", \"_\" or \".\"",
                at: node
            )
            return nil
        }
        return name
    }

    mutating func checkNames(of targets: [ProbeTarget], entries: [String: ConfigNode]) {
        var seen: Set<String> = []
        for target in targets where !seen.insert(target.name).inserted {
            let note =
                target.name == "server" && entries["server"] != nil
                ? " (the server shorthand already defines a target named \"server\")" : ""
            reader.report("duplicate target name \"\(target.name)\"\(note)", path: "targets")
        }
        if targets.isEmpty, reader.problems.isEmpty {
            reader.report("nothing to watch: set server.base_url, or add entries to targets", path: "")
        }
    }

    mutating func parseExpectation(_ node: ConfigNode) -> HTTPExpectation? {
        guard let entries = reader.mapping(node, keys: ["status", "body_contains", "json"]) else { return nil }
        var expectation = HTTPExpectation()
        if let statusNode = entries["status"], let statuses = parseStatuses(statusNode) {
            expectation.statuses = statuses
        }
        if let bodyNode = entries["body_contains"] {
            expectation.bodyContains = reader.string(bodyNode, expected: "text the body must contain")
        }
        if let jsonNode = entries["json"], let json = reader.mapping(jsonNode, keys: ["pointer", "equals"]) {
            let pointer = json["pointer"].flatMap { reader.scalar($0, expected: "a JSON pointer like /status") }
            if let pointer, !pointer.isEmpty, !pointer.hasPrefix("/"), let pointerNode = json["pointer"] {
                reader.report("a JSON pointer starts with \"/\", like /status", at: pointerNode)
            }
            if json["pointer"] == nil {
                reader.report("missing pointer: where in the body to look, like /status", at: jsonNode)
            }
            if json["equals"] == nil { reader.report("missing equals: the value expected there", at: jsonNode) }
            let expected = json["equals"].flatMap { parseJSONScalar($0) }
            if let pointer, let expected { expectation.json = JSONExpectation(pointer: pointer, equals: expected) }
        }
        if expectation.bodyContains != nil, expectation.json != nil {
            reader.report("use body_contains or json, not both", at: node)
        }
        return expectation
    }

    /// `200`, `"2xx"`, `"200-299"`, or a list of those.
    mutating func parseStatuses(_ node: ConfigNode) -> [ClosedRange<Int>]? {
        let items: [ConfigNode] = if case .sequence = node.node { reader.sequence(node) ?? [] } else { [node] }
        if items.isEmpty, case .sequence = node.node {
            reader.report("expected at least one status, like 200, \"2xx\" or \"200-299\"", at: node)
        }
        var ranges: [ClosedRange<Int>] = []
        for item in items {
            guard let text = reader.scalar(item, expected: "a status like 200, \"2xx\" or \"200-299\"") else {
                continue
            }
            let bounds: (Int, Int)? =
                if text.count == 3, text.hasSuffix("xx"), let digit = Int(text.prefix(1)) {
                    (digit * 100, digit * 100 + 99)
                } else if let dash = text.firstIndex(of: "-"), let low = Int(text[..<dash]),
                    let high = Int(text[text.index(after: dash)...])
                {
                    (low, high)
                } else if let code = Int(text) {
                    (code, code)
                } else {
                    nil
                }
            guard let (low, high) = bounds, low <= high, (100...599).contains(low), (100...599).contains(high) else {
                reader.report(
                    "\"\(text)\" is not an HTTP status or range from 100 to 599, like 200, \"2xx\" or \"200-299\"",
                    at: item
                )
                continue
            }
            ranges.append(low...high)
        }
        return ranges.count == items.count && !ranges.isEmpty ? ranges : nil
    }

    mutating func parseJSONScalar(_ node: ConfigNode) -> JSONScalar? {
        guard case .scalar(let scalar) = node.node else {
            reader.report("expected a string, number, boolean or null, found \(node.summary)", at: node)
            return nil
        }
        switch node.tagName {
        case .null: return .null
        case .bool: return node.node.bool.map(JSONScalar.bool)
        case .int, .float:
            guard let number = node.node.float ?? node.node.int.map(Double.init) else {
                reader.report(
                    "\"\(scalar.string)\" is not a number JSON can hold; quote it to compare a string",
                    at: node
                )
                return nil
            }
            return .number(number)
        default: return .string(scalar.string)
        }
    }
}
