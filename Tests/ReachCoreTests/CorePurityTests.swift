import Foundation
import Testing

@Suite("The core stays pure")
struct CorePurityTests {
    /// Concurrency, logging API, collections and the shared helpers: nothing that touches files,
    /// sockets or processes.
    static let allowedImports: Set<String> = [
        "Synchronization", "Logging", "DequeModule", "HeapModule", "ReachSupport",
    ]

    @Test(arguments: ["ReachCore", "ReachSupport"])
    func importsNoIO(module: String) throws {
        let sources = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appending(path: "Sources/\(module)")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(files.count > 10)
        for file in files {
            let imports = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { $0.hasPrefix("import ") || $0.contains(" import ") }
                .compactMap { $0.split(separator: " ").last.map(String.init) }
            let forbidden = Set(imports).subtracting(Self.allowedImports)
            #expect(forbidden.isEmpty, "\(file.lastPathComponent) imports \(forbidden.sorted())")
        }
    }
}
