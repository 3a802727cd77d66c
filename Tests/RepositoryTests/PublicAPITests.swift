import Foundation
import ReachTesting
import Testing

/// Pins the public API of the products, ReachKit, ReachKitQueue, ReachKitEmbedded and ReachKitTesting, to the
/// files in PublicAPI/: one line per public symbol (its path and its declaration), the types the
/// products re-export from the modules behind them included. The modules behind them are not
/// products and declare the rest `package`, so a change in what a program can call shows up here,
/// in review, and never by accident.
///
/// The symbols come from the modules the build already made (`swift-symbolgraph-extract` reads
/// the `.swiftmodule` with the flags SwiftPM compiled it with), so the test costs a second per
/// product and never builds into the folder a running `swift test` holds.
@Suite("The products' public API is what PublicAPI/ says")
struct PublicAPITests {
    static let pinned = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "PublicAPI")

    /// How to write the files anew when a change to the API is meant.
    static let regenerate = "REACHD_UPDATE_PUBLIC_API=1 swift test --skip-build --filter PublicAPITests"

    @Test(arguments: ["ReachKit", "ReachKitQueue", "ReachKitEmbedded", "ReachKitTesting"])
    func publicSymbols(product: String) async throws {
        try await offPool {
            let symbols = try await Self.publicSymbols(of: product)
            #expect(symbols.count > 10, "the symbol graph of \(product) lists its API")
            let file = Self.pinned.appending(path: "\(product).txt")
            let text = symbols.joined(separator: "\n") + "\n"
            if ProcessInfo.processInfo.environment["REACHD_UPDATE_PUBLIC_API"] == "1" {
                try text.write(to: file, atomically: true, encoding: .utf8)
                return
            }
            let expected = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
            let added = symbols.filter { !Set(expected).contains($0) }
            let removed = expected.filter { !Set(symbols).contains($0) }
            #expect(
                added.isEmpty && removed.isEmpty,
                """
                \(product)'s public API changed. Added:
                \(added.joined(separator: "\n"))
                Removed:
                \(removed.joined(separator: "\n"))
                If that is meant, build (swift build --build-tests), run `\(Self.regenerate)` and commit \
                Tests/RepositoryTests/PublicAPI/.
                """
            )
        }
    }

    /// `Path.to.symbol: declaration` for every public symbol of `module`, sorted, without the members
    /// a protocol's extensions give (those change with the toolchain, not with our code).
    static func publicSymbols(of module: String) async throws -> [String] {
        let scratch = try TemporaryDirectory("symbols")
        try await SymbolGraphs.extract(module, into: scratch.path)
        var lines: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(at: scratch.url, includingPropertiesForKeys: nil)
        where file.lastPathComponent.hasSuffix(".symbols.json") {
            let graph = try JSONDecoder().decode(SymbolGraph.self, from: Data(contentsOf: file))
            for symbol in graph.symbols {
                let declaration = (symbol.declarationFragments ?? []).map(\.spelling).joined()
                    .split(whereSeparator: \.isWhitespace).joined(separator: " ")
                lines.insert("\(symbol.pathComponents.joined(separator: ".")): \(declaration)")
            }
        }
        return lines.sorted()
    }

    /// The part of a symbol graph (`*.symbols.json`) the API lines are made of.
    struct SymbolGraph: Decodable {
        struct Symbol: Decodable {
            struct Fragment: Decodable { var spelling: String }
            var pathComponents: [String]
            var declarationFragments: [Fragment]?
        }
        var symbols: [Symbol]
    }
}
