import Foundation
import ReachTesting
import Testing

@testable import ReachConfig

/// `YAMLComposer` replaced Yams' `compose(yaml:)` (with its rule-less resolver) under the
/// configuration reader, so it must compose what Yams composed, node for node and mark for mark,
/// and refuse what Yams refused, in the same words: every configuration error a person sees comes
/// from one or the other. Yams is here to ask (``YamsOracle``).
@Suite("YAML composer: as Yams composed")
struct YAMLComposerTests {
    static let fuzzTesting = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "FuzzTesting")

    /// The config fuzz target's corpus: real configurations, each kind of problem, and what the
    /// fuzzer found.
    static func corpus() throws -> [String] {
        let directory = fuzzTesting.appending(path: "Corpora/config")
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted().map {
            String(decoding: try Data(contentsOf: directory.appending(path: $0)), as: UTF8.self)
        }
    }

    /// Texts that take each way into and out of libyaml and the composer.
    static let written = [
        "", " ", "\n", "# only a comment\n", "---\n", "--- ~\n", "...\n", "a: 1\n", "a: 1\n---\nb: 2\n",
        "a: 1\n--- {\n", "- a\n- b\n", "[a, b, {c: d}]", "{a: [1, 2], b: {c: ~}}", "? [a, b]\n: c\n",
        "? {a: 1}\n: x\n? {a: 1}\n: y\n", "a: &x 1\nb: *x\n", "a: &x {k: v}\nb: *x\nc: &x 2\nd: *x\n",
        "a: *missing\n", "a: &x [*x]\n", "a: !!int 5\nb: !!str 5\nc: !custom x\nd: ! 7\ne: !!map {}\n",
        "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n", "%YAML 1.1\n---\na: 1\n", "%YAML 2.0\n---\na: 1\n",
        "a: 'single'\nb: \"double\\tq\"\nc: |\n  literal\n  text\nd: >\n  folded\n  text\ne: plain\n",
        "a: 1\na: 2\n", "x:\n  b: 1\n  a: 2\n  b: 3\n  a: 4\n", "'a': 1\na: 2\n", "!!int 1: a\n1: b\n",
        "a: b: c\n", "a:\n- b\n c\n", "key: [unclosed\n", "key: {unclosed\n", "key: \"unclosed\n", "- [a\n- b]\n",
        "\ta: 1\n", "a:\n\tb: 1\n", "a: @b\n", "a: `b\n", "%FOO bar\n---\na: 1\n", "&anchor\n", "*alias\n",
        "a: !<tag:x> 1\n", "a: !!\n", "a: \"\\q\"\n", "a: \"\\ud800\"\n", "a: |0\n  x\n", "a: >-5\n", "? a\n? a\n",
        "a:\r\n  b: 1\r\n  b: 2\r\n", "a: x\rb: y\r", "é: ü\nnaïve: 1\nx: 日本\n", "a: 1\u{85}b: 2\n",
        "a: \u{2028}b\n", "a: 1 # comment\n#: 2\n", "a: \u{01}\n", "a:\u{00}b\n", "\u{FEFF}a: 1\n", "a: \u{7F}\n",
        "a: \u{FFFE}\n", "𝄞: [𝄞, \"𝄞\u{01}\"]\n", "- - - - - a\n", String(repeating: "[", count: 50),
        String(repeating: "- ", count: 40) + "x\n", "a: 1:30\nb: 0x1F\nc: 0o17\nd: 017\ne: .inf\nf: -.NaN\ng: 1_000\n",
        "a: yes\nb: 'yes'\nc: Off\nd: TRUE\ne: !!bool maybe\n",
        "a: 1e3\nb: 1.5e-3\nc: +12\nd: -0\ne: 0b101\nf: 190:20:30.5\n",
    ]

    @Test func composesTheCorpusAndTheWrittenTextsAsYamsDid() async throws {
        try await expectSame(try Self.corpus() + Self.written)
    }

    /// The corpus with random edits made of YAML's own punctuation, from a fixed seed: most are
    /// syntax errors, so this is where the errors' words and positions are held to Yams'.
    @Test func composesEditedTextsAsYamsDid() async throws {
        let corpus = try Self.corpus()
        var random = SeededGenerator(seed: 0x5EED_1A3B)
        let pieces = Array("-:?[]{},#&*!|>'\"%@`\\ \t\n\r\u{85}xé0.~")
        var edited: [String] = []
        for round in 0..<3_000 {
            var text = Array(corpus[round % corpus.count].unicodeScalars)
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let at = text.isEmpty ? 0 : Int(random.next() % UInt64(text.count))
                let piece = pieces[Int(random.next() % UInt64(pieces.count))].unicodeScalars
                switch random.next() % 3 {
                case 0: text.insert(contentsOf: piece, at: at)
                case 1 where !text.isEmpty: text.remove(at: at)
                default: text.replaceSubrange(at..<min(at + 1, text.count), with: piece)
                }
            }
            var written = ""
            written.unicodeScalars.append(contentsOf: text)
            edited.append(written)
        }
        try await expectSame(edited)
    }

    /// Nesting within libyaml's bounds composes as Yams composed it; far beyond them, both refuse
    /// (Yams' copy of libyaml at about 1,000 levels, in its words; the system's has no bound, and
    /// the composer refuses more than ``YAMLComposer/maximumDepth``: walking and freeing a deeper
    /// tree would recurse).
    @Test func deepNestingIsRefusedNotRecursedInto() async throws {
        let nested = { (depth: Int) in
            [
                String(repeating: "[", count: depth) + String(repeating: "]", count: depth),
                String(repeating: "- ", count: depth) + "x\n",
            ]
        }
        try await expectSame(nested(900))
        for text in nested(YAMLComposer.maximumDepth + 1) + nested(100_000) {
            #expect(throws: YAMLError.self) { try YAMLComposer.compose(text) }
        }
        #expect(try await YamsOracle.answers("compose", for: nested(100_000)).allSatisfy { $0.hasPrefix("error ") })
    }

    /// Composes each of `texts` and asks Yams to, and expects the same node or the same error.
    private func expectSame(_ texts: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let theirs = try await YamsOracle.answers("compose", for: texts)
        for (text, theirs) in zip(texts, theirs) {
            let ours: String
            do { ours = "ok " + Self.shape(try YAMLComposer.compose(text)) } catch { ours = "error \(error)" }
            #expect(ours == theirs, "\(text.debugDescription)", sourceLocation: sourceLocation)
        }
    }

    /// Everything the configuration reader reads of a node, as text: kind, tag, text, style,
    /// mark, and the values it takes of a scalar. Yams resolves the tags of a mapping's keys, and
    /// of everything in them, in place when it checks them for duplicates: `inKey` reads those
    /// resolved (and no values: they follow the tags).
    private static func shape(_ node: YAMLNode?, inKey: Bool = false) -> String {
        guard let node else { return "nil" }
        let tag = inKey ? node.resolvedTag : node.tag
        switch node {
        case .scalar(let scalar):
            let values =
                inKey
                ? ""
                : " \(String(describing: node.bool)) \(String(describing: node.float ?? node.int.map(Double.init)))"
            return "\(scalar.mark) \(tag.rawValue) \(scalar.style.rawValue) \(scalar.string.debugDescription)" + values
        case .mapping(let mapping):
            return "\(mapping.mark) \(tag.rawValue) {"
                + mapping.pairs.map { shape($0.key, inKey: true) + ": " + shape($0.value, inKey: inKey) }
                .joined(separator: ", ") + "}"
        case .sequence(let sequence):
            return "\(sequence.mark) \(tag.rawValue) ["
                + sequence.nodes.map { shape($0, inKey: inKey) }
                .joined(separator: ", ") + "]"
        }
    }
}
