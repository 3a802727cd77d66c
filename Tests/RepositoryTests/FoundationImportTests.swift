import Foundation
import Testing

/// Our code imports FoundationEssentials, never the full Foundation: the full Foundation links
/// FoundationInternationalization and with it ICU, 34 MB of data and 4 MB of code that reachd has
/// no use for (docs/performance.md, "Size"). One import anywhere in what reachd or reachctl links
/// brings it all back. `scripts/test-package` checks the shipped binaries themselves; this test
/// names the file at once.
@Suite("Our code imports FoundationEssentials only")
struct FoundationImportTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// ReachKitQueue stores a program's queue through GRDB, which imports the full Foundation in
    /// every file: a program that links the queue has Foundation anyway, and reachd does not link it.
    static let allowed: Set = ["ReachKitQueue"]

    @Test func noModuleOfOursImportsTheFullFoundation() throws {
        let sources = Self.root.appending(path: "Sources")
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 100, "the sources were found")
        let fullFoundation =
            /^\s*(?:@\w+\s+)*(?:(?:public|package|internal)\s+)?import\s+(?:\w+\s+)?Foundation(?:\.\w+)?\s*$/
        for file in files where !Self.allowed.contains(String(file.prefix { $0 != "/" })) {
            let text = try String(contentsOf: sources.appending(path: file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.wholeMatch(of: fullFoundation) != nil {
                Issue.record("Sources/\(file):\(number + 1): \(line) (import FoundationEssentials)")
            }
        }
    }
}
