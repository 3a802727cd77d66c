import CYAML

/// Composes the one document of a YAML text into ``YAMLNode``s, from the events of the system's
/// libyaml (the parser Yams wraps, without Yams' Foundation and resolver).
///
/// It reads as Yams' `compose(yaml:)` read with its rule-less resolver, which the configuration
/// used before: the same nodes, tags as written, aliases resolved to their anchor's node, a
/// mapping's duplicated keys refused, a second document refused, and the same errors.
/// (`YAMLComposerTests` hold the two side by side.) libyaml refuses collections nested more than
/// 1,000 deep (Debian's as Yams' copy); the composer refuses them too, should a libyaml without
/// that limit be linked: the tree is built without recursion, but walking and freeing a deeper
/// one would recurse.
enum YAMLComposer {
    static let maximumDepth = 1000

    /// The document's root node; `nil` when the text holds no document.
    static func compose(_ yaml: String) throws(YAMLError) -> YAMLNode? {
        var text = yaml
        return try text.withUTF8 { bytes in
            Result { () throws(YAMLError) in try compose(bytes, yaml: yaml) }
        }.get()
    }

    private static func compose(_ bytes: UnsafeBufferPointer<UInt8>, yaml: String) throws(YAMLError) -> YAMLNode? {
        guard let start = bytes.baseAddress else { return nil }  // no bytes, no document
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        defer { parser.deallocate() }
        guard yaml_parser_initialize(parser) == 1 else { throw .memory }
        defer { yaml_parser_delete(parser) }
        yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
        yaml_parser_set_input_string(parser, start, bytes.count)
        var events = Events(parser: parser, yaml: yaml)

        _ = try events.next()  // STREAM-START
        guard case .documentStart = try events.next() else { return nil }
        let root = try events.node()
        _ = try events.next()  // DOCUMENT-END
        let next = try events.next()
        guard case .streamEnd = next else {
            throw .composer(
                context: YAMLError.Context(
                    text: "expected a single document in the stream",
                    mark: YAMLMark(line: 1, column: 1)
                ),
                problem: "but found another document",
                next.mark,
                yaml: yaml
            )
        }
        return root
    }

    /// libyaml's events, copied out of its structures as they come.
    private struct Events {
        let parser: UnsafeMutablePointer<yaml_parser_t>
        let yaml: String
        var anchors: [String: YAMLNode] = [:]

        enum Event {
            case streamStart, streamEnd(YAMLMark), documentStart(YAMLMark), documentEnd
            case alias(anchor: String, YAMLMark)
            case scalar(YAMLNode.Scalar, anchor: String?)
            case sequenceStart(tag: YAMLTag, anchor: String?, YAMLMark), sequenceEnd
            case mappingStart(tag: YAMLTag, anchor: String?, YAMLMark), mappingEnd

            var mark: YAMLMark {
                switch self {
                case .streamEnd(let mark), .documentStart(let mark), .alias(_, let mark),
                    .sequenceStart(_, _, let mark),
                    .mappingStart(_, _, let mark):
                    mark
                case .scalar(let scalar, _): scalar.mark
                case .streamStart, .documentEnd, .sequenceEnd, .mappingEnd: YAMLMark(line: 1, column: 1)
                }
            }
        }

        mutating func next() throws(YAMLError) -> Event {
            var event = yaml_event_t()
            guard yaml_parser_parse(parser, &event) == 1 else { throw error() }
            defer { yaml_event_delete(&event) }
            let mark = YAMLMark(line: event.start_mark.line + 1, column: event.start_mark.column + 1)
            switch event.type {
            case YAML_STREAM_END_EVENT: return .streamEnd(mark)
            case YAML_DOCUMENT_START_EVENT: return .documentStart(mark)
            case YAML_DOCUMENT_END_EVENT: return .documentEnd
            case YAML_ALIAS_EVENT: return .alias(anchor: Self.text(event.data.alias.anchor) ?? "", mark)
            case YAML_SCALAR_EVENT:
                let scalar = event.data.scalar
                let value = String(
                    decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length),
                    as: UTF8.self
                )
                let tag = scalar.quoted_implicit == 1 ? YAMLTag.str : Self.tag(scalar.tag)
                let style = YAMLNode.Scalar.Style(rawValue: scalar.style.rawValue) ?? .plain
                return .scalar(
                    YAMLNode.Scalar(string: value, tag: tag, style: style, mark: mark),
                    anchor: Self.text(scalar.anchor)
                )
            case YAML_SEQUENCE_START_EVENT:
                let start = event.data.sequence_start
                return .sequenceStart(
                    tag: start.implicit != 0 ? .implicit : Self.tag(start.tag),
                    anchor: Self.text(start.anchor),
                    mark
                )
            case YAML_SEQUENCE_END_EVENT: return .sequenceEnd
            case YAML_MAPPING_START_EVENT:
                let start = event.data.mapping_start
                return .mappingStart(
                    tag: start.implicit != 0 ? .implicit : Self.tag(start.tag),
                    anchor: Self.text(start.anchor),
                    mark
                )
            case YAML_MAPPING_END_EVENT: return .mappingEnd
            default: return .streamStart
            }
        }

        /// A list or mapping being read, innermost last.
        private enum Open {
            case sequence(YAMLNode.Sequence, anchor: String?)
            case mapping(YAMLNode.Mapping, anchor: String?, key: YAMLNode?)
        }

        /// The node whose first event comes next, with everything in it.
        mutating func node() throws(YAMLError) -> YAMLNode {
            var open: [Open] = []
            while true {
                let event = try next()
                var node: YAMLNode
                switch event {
                case .alias(let anchor, let mark):
                    guard let target = anchors[anchor] else {
                        throw .composer(context: nil, problem: "found undefined alias", mark, yaml: yaml)
                    }
                    node = target
                case .scalar(let scalar, let anchor):
                    node = .scalar(scalar)
                    register(node, as: anchor)
                case .sequenceStart(let tag, let anchor, let mark), .mappingStart(let tag, let anchor, let mark):
                    guard open.count < maximumDepth else {
                        throw .parser(
                            context: nil,
                            problem: "lists and mappings nested more than \(maximumDepth) deep",
                            mark,
                            yaml: yaml
                        )
                    }
                    if case .sequenceStart = event {
                        open.append(.sequence(YAMLNode.Sequence(nodes: [], tag: tag, mark: mark), anchor: anchor))
                    } else {
                        open.append(
                            .mapping(YAMLNode.Mapping(pairs: [], tag: tag, mark: mark), anchor: anchor, key: nil)
                        )
                    }
                    continue
                case .sequenceEnd, .mappingEnd:
                    switch open.popLast() {
                    case .sequence(let sequence, let anchor):
                        node = .sequence(sequence)
                        register(node, as: anchor)
                    case .mapping(let mapping, let anchor, _):
                        try checkDuplicates(mapping)
                        node = .mapping(mapping)
                        register(node, as: anchor)
                    case nil:
                        throw .composer(context: nil, problem: "found an unexpected end", event.mark, yaml: yaml)
                    }
                case .streamStart, .streamEnd, .documentStart, .documentEnd:
                    throw .composer(context: nil, problem: "found no node", event.mark, yaml: yaml)
                }
                switch open.popLast() {
                case nil:
                    return node
                case .sequence(var sequence, let anchor):
                    sequence.nodes.append(node)
                    open.append(.sequence(sequence, anchor: anchor))
                case .mapping(var mapping, let anchor, let key?):
                    mapping.pairs.append(YAMLNode.Mapping.Pair(key: key, value: node))
                    open.append(.mapping(mapping, anchor: anchor, key: nil))
                case .mapping(let mapping, let anchor, nil):
                    open.append(.mapping(mapping, anchor: anchor, key: node))
                }
            }
        }

        /// A later anchor of the same name hides an earlier one.
        private mutating func register(_ node: YAMLNode, as anchor: String?) {
            if let anchor { anchors[anchor] = node }
        }

        private func checkDuplicates(_ mapping: YAMLNode.Mapping) throws(YAMLError) {
            let duplicates = Dictionary(grouping: mapping.pairs.map(\.key)) { $0 }.filter { $0.value.count > 1 }
            guard !duplicates.isEmpty else { return }
            let keys = duplicates.keys.sorted(by: <)
            throw .duplicatedKeysInMapping(
                duplicates: keys.map { $0.string ?? "<uncovertable>" },
                context: YAMLError.Context(text: yaml, mark: keys[0].mark)
            )
        }

        private func error() -> YAMLError {
            let parser = parser.pointee
            let problem = parser.problem.map { String(cString: $0) } ?? ""
            let mark = YAMLMark(line: parser.problem_mark.line + 1, column: parser.problem_mark.column + 1)
            let context = parser.context.map {
                YAMLError.Context(
                    text: String(cString: $0),
                    mark: YAMLMark(line: parser.context_mark.line + 1, column: parser.context_mark.column + 1)
                )
            }
            switch parser.error {
            case YAML_READER_ERROR:
                // libyaml counts bytes; the description counts characters.
                let index = yaml.utf8.index(
                    yaml.utf8.startIndex,
                    offsetBy: parser.problem_offset,
                    limitedBy: yaml.utf8.endIndex
                )?
                .samePosition(in: yaml)
                return .reader(
                    problem: problem,
                    offset: index.map { yaml.distance(from: yaml.startIndex, to: $0) },
                    value: parser.problem_value,
                    yaml: yaml
                )
            case YAML_SCANNER_ERROR: return .scanner(context: context, problem: problem, mark, yaml: yaml)
            case YAML_PARSER_ERROR: return .parser(context: context, problem: problem, mark, yaml: yaml)
            case YAML_COMPOSER_ERROR: return .composer(context: context, problem: problem, mark, yaml: yaml)
            default: return .memory
            }
        }

        private static func text(_ pointer: UnsafeMutablePointer<UInt8>?) -> String? {
            pointer.map { String(decodingCString: $0, as: UTF8.self) }
        }

        private static func tag(_ pointer: UnsafeMutablePointer<UInt8>?) -> YAMLTag {
            text(pointer).map(YAMLTag.init(rawValue:)) ?? .implicit
        }
    }
}
