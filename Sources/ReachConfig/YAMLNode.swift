/// A node of a composed YAML document (``YAMLComposer``): a scalar, a mapping or a list, each with
/// the tag it was written with and where it starts. Aliases are resolved to the node they name.
///
/// Two nodes are equal when YAML says they are the same key: the same text and resolved tag for
/// scalars, equal entries and tag for collections; where they were written does not count.
indirect enum YAMLNode: Hashable, Sendable {
    case scalar(Scalar)
    case mapping(Mapping)
    case sequence(Sequence)

    struct Scalar: Hashable, Sendable {
        var string: String
        /// As written: ``YAMLTag/implicit`` for a plain scalar without one, ``YAMLTag/str`` for a quoted one.
        var tag: YAMLTag
        var style: Style
        var mark: YAMLMark

        /// libyaml's `yaml_scalar_style_t`.
        enum Style: UInt32, Sendable {
            case plain = 1, singleQuoted, doubleQuoted, literal, folded
        }

        static func == (a: Scalar, b: Scalar) -> Bool {
            a.string == b.string && YAMLNode.scalar(a).resolvedTag == YAMLNode.scalar(b).resolvedTag
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(string)
            hasher.combine(YAMLNode.scalar(self).resolvedTag)
        }
    }

    /// A mapping's entries in the order written.
    struct Mapping: RandomAccessCollection, Hashable, Sendable {
        var pairs: [Pair]
        var tag: YAMLTag
        var mark: YAMLMark

        struct Pair: Hashable, Sendable {
            var key: YAMLNode
            var value: YAMLNode
        }

        var startIndex: Int { pairs.startIndex }
        var endIndex: Int { pairs.endIndex }
        subscript(position: Int) -> (key: YAMLNode, value: YAMLNode) { (pairs[position].key, pairs[position].value) }

        static func == (a: Mapping, b: Mapping) -> Bool {
            a.pairs == b.pairs && YAMLNode.mapping(a).resolvedTag == YAMLNode.mapping(b).resolvedTag
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(pairs)
            hasher.combine(YAMLNode.mapping(self).resolvedTag)
        }
    }

    struct Sequence: RandomAccessCollection, Hashable, Sendable {
        var nodes: [YAMLNode]
        var tag: YAMLTag
        var mark: YAMLMark

        var startIndex: Int { nodes.startIndex }
        var endIndex: Int { nodes.endIndex }
        subscript(position: Int) -> YAMLNode { nodes[position] }

        static func == (a: Sequence, b: Sequence) -> Bool {
            a.nodes == b.nodes && YAMLNode.sequence(a).resolvedTag == YAMLNode.sequence(b).resolvedTag
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(nodes)
            hasher.combine(YAMLNode.sequence(self).resolvedTag)
        }
    }

    /// An empty mapping: what an empty document reads as.
    static let emptyMapping = YAMLNode.mapping(Mapping(pairs: [], tag: .map, mark: YAMLMark(line: 1, column: 1)))

    var mark: YAMLMark {
        switch self {
        case .scalar(let scalar): scalar.mark
        case .mapping(let mapping): mapping.mark
        case .sequence(let sequence): sequence.mark
        }
    }

    /// The tag as written: ``YAMLTag/implicit`` when none was.
    var tag: YAMLTag {
        switch self {
        case .scalar(let scalar): scalar.tag
        case .mapping(let mapping): mapping.tag
        case .sequence(let sequence): sequence.tag
        }
    }

    /// The tag as written, or the kind's own when none (or `!`) was: a scalar is then a string.
    /// (Plain scalars are typed by ``ImplicitTag``, which the configuration reader asks.)
    var resolvedTag: YAMLTag {
        guard tag == .implicit || tag == .nonSpecific else { return tag }
        switch self {
        case .scalar: return .str
        case .mapping: return .map
        case .sequence: return .seq
        }
    }

    /// The scalar's text; `nil` for a collection.
    var string: String? {
        if case .scalar(let scalar) = self { scalar.string } else { nil }
    }

    /// The order duplicated keys are named in: scalars by text, collections by their entries.
    static func < (a: YAMLNode, b: YAMLNode) -> Bool {
        switch (a, b) {
        case (.scalar(let a), .scalar(let b)): a.string < b.string
        case (.mapping(let a), .mapping(let b)): a.pairs.map(\.key).lexicographicallyPrecedes(b.pairs.map(\.key), by: <)
        case (.sequence(let a), .sequence(let b)): a.nodes.lexicographicallyPrecedes(b.nodes, by: <)
        default: false
        }
    }

    // MARK: Scalar values, as YAML 1.1 writes them

    /// `true`/`yes`/`on` and `false`/`no`/`off` in any case; a quoted scalar is no boolean.
    var bool: Bool? {
        guard case .scalar(let scalar) = self, scalar.tag != .str else { return nil }
        switch scalar.string.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: return nil
        }
    }

    /// A plain scalar's whole number: decimal, `0x` hex, `0b` binary, `0o` or `0` octal, with a sign
    /// and `_` anywhere. (Base 60 is read by ``float``, which the reader asks first.)
    var int: Int? {
        guard case .scalar(let scalar) = self, scalar.style == .plain else { return nil }
        let text = scalar.string.filter { $0 != "_" }
        if text == "0" { return 0 }
        let negative = text.hasPrefix("-")
        let digits = text.dropFirst(negative || text.hasPrefix("+") ? 1 : 0)
        for (prefix, radix) in [("0x", 16), ("0b", 2), ("0o", 8), ("0", 8)] where digits.hasPrefix(prefix) {
            return Int((negative ? "-" : "") + digits.dropFirst(prefix.count), radix: radix)
        }
        return Int(text)
    }

    /// A plain scalar's number: anything Swift's `Double` reads, `.inf`, `-.inf`, `.nan`, or base 60
    /// (`[-+]d:d:...:d`).
    var float: Double? {
        guard case .scalar(let scalar) = self, scalar.style == .plain else { return nil }
        switch scalar.string.lowercased() {
        case ".inf", "+.inf": return .infinity
        case "-.inf": return -.infinity
        case ".nan": return .nan
        default:
            let text = scalar.string.filter { $0 != "_" }
            guard text.contains(":") else { return Double(text) }
            let sign: Double = text.hasPrefix("-") ? -1 : 1
            let parts = text.dropFirst(text.hasPrefix("-") || text.hasPrefix("+") ? 1 : 0)
                .split(separator: ":", omittingEmptySubsequences: false)
            var (value, base) = (0.0, 1.0)
            for part in parts.reversed() {
                guard let digit = Double(part) else { return nil }
                (value, base) = (value + digit * base, base * 60)
            }
            return sign * value
        }
    }
}
