import Foundation
import ReachTesting
import Testing

/// The README is the newcomer's way in and `docs/` holds everything else, one page per topic. A
/// page that moves or a heading that is renamed silently breaks the links that lead to it, and a
/// README that grows back is no longer read to the end. These tests catch both in `swift test`.
@Suite("Documentation links")
struct DocumentationLinkTests {
    /// The repository root: this file is `Tests/RepositoryTests/DocumentationLinkTests.swift`.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// README.md and every `docs/**/*.md`.
    static func markdownFiles() throws -> [MarkdownFile] {
        let docs = try FileManager.default.subpathsOfDirectory(atPath: root.appending(path: "docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return try (["README.md"] + docs).map { try MarkdownFile(url: root.appending(path: $0), name: $0) }
    }

    @Test func readmeIsAtMostThreeHundredLines() throws {
        let readme = try MarkdownFile(url: Self.root.appending(path: "README.md"), name: "README.md")
        #expect(readme.lineCount <= 300, "README.md has \(readme.lineCount) lines: move detail into docs/")
    }

    @Test func relativeLinksResolve() async throws {
        let files = try await offPool { try Self.markdownFiles() }
        #expect(files.count > 1, "no pages found under docs/")
        for file in files {
            for link in file.links where !link.path.isEmpty {
                let exists = FileManager.default.fileExists(atPath: file.resolve(link.path).path)
                #expect(exists, "\(file.name):\(link.line): broken link \(link.target)")
            }
        }
    }

    @Test func fragmentsMatchHeadings() async throws {
        try await offPool { try Self.matchFragments() }
    }

    private static func matchFragments() throws {
        for file in try markdownFiles() {
            for link in file.links {
                guard let fragment = link.fragment, link.path.isEmpty || link.path.hasSuffix(".md") else { continue }
                // A missing file is relativeLinksResolve's failure, not this one's.
                let target =
                    if link.path.isEmpty { file } else {
                        try? MarkdownFile(url: file.resolve(link.path), name: link.path)
                    }
                guard let target else { continue }
                #expect(
                    target.anchors.contains(fragment),
                    "\(file.name):\(link.line): no heading for #\(fragment) in \(link.target)"
                )
            }
        }
    }
}

/// A markdown file's relative links and the GitHub-style anchors of its headings, both read
/// outside fenced code blocks.
struct MarkdownFile {
    struct Link {
        var line: Int
        var target: String
        var path: String
        var fragment: String?
    }

    var url: URL
    var name: String
    var lineCount = 0
    var links: [Link] = []
    var anchors: Set<String> = []

    init(url: URL, name: String) throws {
        self.url = url
        self.name = name
        var lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        lineCount = lines.count
        var inFence = false
        var headingCounts: [String: Int] = [:]
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                inFence.toggle()
                continue
            }
            if inFence { continue }
            if let heading = line.firstMatch(of: /^#{1,6}[ \t]+(.+)$/) {
                let anchor = Self.anchor(String(heading.1))
                let seen = headingCounts[anchor, default: 0]
                headingCounts[anchor] = seen + 1
                anchors.insert(seen == 0 ? anchor : "\(anchor)-\(seen)")
            }
            let prose = line.replacing(/`[^`]*`/, with: "")  // a link in a code span is no link
            let targets =
                prose.matches(of: /\[[^\]]*\]\(\s*<?([^)\s>]+)>?[^)]*\)/).map { String($0.1) }
                + prose.matches(of: /<a\s[^>]*href\s*=\s*"([^"]*)"/).map { String($0.1) }
            for target in targets where !["http:", "https:", "mailto:"].contains(where: { target.hasPrefix($0) }) {
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let path = String(parts[0]).removingPercentEncoding ?? String(parts[0])
                let fragment = parts.count > 1 ? String(parts[1]).removingPercentEncoding : nil
                links.append(Link(line: index + 1, target: target, path: path, fragment: fragment))
            }
        }
    }

    /// Where a relative link's path leads from this file.
    func resolve(_ path: String) -> URL {
        url.deletingLastPathComponent().appending(path: path)
    }

    /// GitHub's anchor for a heading: lowercase, spaces to `-`, punctuation other than `-` and `_` removed.
    static func anchor(_ heading: String) -> String {
        String(
            heading.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                return character.isLetter || character.isNumber || character == "-" || character == "_"
                    ? character : nil
            }
        )
    }
}
