import ReachCore
import ReachSupport

/// A YAML node and the key path that led to it.
struct ConfigNode {
    let node: YAMLNode
    let path: String

    /// The resolved YAML tag: quoted scalars are strings, `true` is a bool, `~` is null.
    ///
    /// A scalar's tag is read as written: an untagged plain scalar is resolved by ``ImplicitTag``.
    var tagName: YAMLTag {
        guard case .scalar(let scalar) = node else { return node.resolvedTag }
        switch scalar.tag {
        case .implicit: return ImplicitTag.of(scalar.string)
        case .nonSpecific: return .str
        case let written: return written
        }
    }

    func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// What the node is, for "expected X, found Y" messages.
    var summary: String {
        switch node {
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .scalar(let scalar):
            tagName == .null
                ? "no value"
                : "\"\(scalar.string.count > 40 ? scalar.string.prefix(40) + "…" : Substring(scalar.string))\""
        }
    }
}

/// Walks YAML nodes into typed values, collecting every problem with its key path and line
/// instead of stopping at the first.
struct ConfigReader {
    let source: String
    private(set) var problems: [ConfigurationProblem] = []

    init(source: String) {
        self.source = source
    }

    mutating func report(_ message: String, at node: ConfigNode) {
        report(message, path: node.path, mark: node.node.mark)
    }

    mutating func report(_ message: String, path: String, mark: YAMLMark? = nil) {
        problems.append(
            ConfigurationProblem(
                source: source,
                keyPath: path,
                line: mark?.line,
                column: mark?.column,
                message: message
            )
        )
    }

    /// Takes in the problems another reader found, in a file this one's names (the web configuration).
    mutating func adopt(_ others: [ConfigurationProblem]) {
        problems += others
    }

    /// The entries of a mapping, keyed by name. Unknown keys are reported with the closest known key.
    mutating func mapping(_ node: ConfigNode, keys allowed: [String]) -> [String: ConfigNode]? {
        guard case .mapping(let mapping) = node.node else {
            report("expected a mapping with keys \(allowed.joined(separator: ", ")), found \(node.summary)", at: node)
            return nil
        }
        var entries: [String: ConfigNode] = [:]
        for (key, value) in mapping {
            guard case .scalar(let scalar) = key else {
                report("keys must be plain names", path: node.path, mark: key.mark)
                continue
            }
            let name = scalar.string
            guard allowed.contains(name) else {
                let hint =
                    Suggestion.closest(to: name, in: allowed).map { "; did you mean \"\($0)\"?" }
                    ?? "; known keys: \(allowed.joined(separator: ", "))"
                report("unknown key\(hint)", path: node.child(name), mark: key.mark)
                continue
            }
            entries[name] = ConfigNode(node: value, path: node.child(name))
        }
        return entries
    }

    mutating func sequence(_ node: ConfigNode) -> [ConfigNode]? {
        guard case .sequence(let sequence) = node.node else {
            report("expected a list, found \(node.summary)", at: node)
            return nil
        }
        return sequence.enumerated().map { ConfigNode(node: $1, path: "\(node.path)[\($0)]") }
    }

    /// A scalar's text; `what` describes the expected value in the error.
    mutating func scalar(_ node: ConfigNode, expected what: String) -> String? {
        guard case .scalar(let scalar) = node.node, node.tagName != .null else {
            report("expected \(what), found \(node.summary)", at: node)
            return nil
        }
        return scalar.string
    }

    mutating func string(_ node: ConfigNode, expected what: String = "a string") -> String? {
        guard let text = scalar(node, expected: what) else { return nil }
        guard !text.isEmpty else {
            report("expected \(what), found an empty string", at: node)
            return nil
        }
        return text
    }

    /// One of a fixed set of words, with a suggestion for a misspelling.
    mutating func choice(_ node: ConfigNode, of choices: [String]) -> String? {
        let expected = "one of \(choices.joined(separator: ", "))"
        guard let text = scalar(node, expected: expected) else { return nil }
        guard choices.contains(text) else {
            let hint = Suggestion.closest(to: text, in: choices).map { "; did you mean \"\($0)\"?" } ?? ""
            report("\"\(text)\" is not \(expected)\(hint)", at: node)
            return nil
        }
        return text
    }

    mutating func boolean(_ node: ConfigNode) -> Bool? {
        guard scalar(node, expected: "true or false") != nil else { return nil }
        guard node.tagName == .bool, let value = node.node.bool else {
            report("expected true or false, found \(node.summary)", at: node)
            return nil
        }
        return value
    }

    mutating func integer(_ node: ConfigNode, in range: ClosedRange<Int>) -> Int? {
        let expected = "a whole number from \(range.lowerBound) to \(range.upperBound)"
        guard let text = scalar(node, expected: expected) else { return nil }
        guard node.tagName == .int, let value = Int(text), range.contains(value) else {
            report("expected \(expected), found \(node.summary)", at: node)
            return nil
        }
        return value
    }

    mutating func duration(_ node: ConfigNode, in range: ClosedRange<Duration>) -> Duration? {
        let bounds = "from \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound))"
        guard let text = scalar(node, expected: "a duration like 1s or 250ms") else { return nil }
        guard let duration = DurationText.parse(text) else {
            let hint = Double(text) != nil ? " (add a unit: \(text)s or \(text)ms)" : " (units: ns, us, ms, s, m, h, d)"
            report("\"\(text)\" is not a duration like 1s, 250ms or 1m30s\(hint)", at: node)
            return nil
        }
        guard range.contains(duration) else {
            report("\(text) is out of range: expected \(bounds)", at: node)
            return nil
        }
        return duration
    }

    /// A list of non-empty strings; a single string counts as a list of one.
    mutating func strings(_ node: ConfigNode) -> [String]? {
        switch node.node {
        case .scalar:
            return string(node).map { [$0] }
        case .sequence:
            guard let items = sequence(node) else { return nil }
            let values = items.compactMap { string($0) }
            return values.count == items.count ? values : nil
        case .mapping:
            report("expected a list of strings, found \(node.summary)", at: node)
            return nil
        }
    }
}
