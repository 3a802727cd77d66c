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
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
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
        let build = try BuildFolder.containingThisTest()
        let compile = try build.compileArguments(of: module)
        let scratch = try TemporaryDirectory("symbols")
        let reexported = try reexportedModules(of: module)
        var arguments = [
            "-module-name", module, "-output-dir", scratch.path, "-module-cache-path", "\(scratch)/cache",
            "-minimum-access-level", "public", "-skip-synthesized-members",
        ]
        if !reexported.isEmpty {
            arguments.append("-experimental-allowed-reexported-modules=\(reexported.joined(separator: ","))")
        }
        arguments += searchArguments(of: compile.arguments)
        let extract = compile.compiler.deletingLastPathComponent().appending(path: "swift-symbolgraph-extract")
        let run = try await runProgram(extract.path, arguments)
        #expect(run.status == 0, "swift-symbolgraph-extract failed: \(run.errors)")
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

    /// The modules a product re-exports types of (`@_exported import struct M.T`): their symbols are its API.
    static func reexportedModules(of module: String) throws -> [String] {
        let folder = root.appending(path: "Sources/\(module)")
        let pattern = /^@_exported\s+import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)/
        var modules: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        where file.pathExtension == "swift" {
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                if let match = line.firstMatch(of: pattern) { modules.insert(String(match.1)) }
            }
        }
        return modules.sorted()
    }

    /// What the extractor needs of the compiler's arguments to load the module as it was built:
    /// the target, the SDK, and where the modules and the C module maps it imports are.
    static func searchArguments(of arguments: [String]) -> [String] {
        var kept: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if ["-I", "-F", "-Xcc", "-target", "-sdk"].contains(argument), index + 1 < arguments.endIndex {
                kept += [argument, arguments[index + 1]]
                index += 2
                continue
            }
            if argument.hasPrefix("-I") { kept.append(argument) }
            index += 1
        }
        return kept
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
