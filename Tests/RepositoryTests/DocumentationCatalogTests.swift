import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// Each product's DocC catalog (`Sources/<product>/<product>.docc`: its landing page and articles)
/// builds against the product's public symbols without a warning: every symbol link resolves, in
/// the articles and in the doc comments alike.
///
/// The toolchain's `docc` is run on the symbol graphs of the modules the build already made, as
/// ``PublicAPITests`` reads them, rather than through swift-docc-plugin, which would add a package
/// dependency and build every product a second time for its symbol graphs.
@Suite("The products' documentation builds without a warning")
struct DocumentationCatalogTests {
    @Test(arguments: ["ReachKit", "ReachKitQueue", "ReachKitEmbedded"])
    func catalogBuilds(product: String) async throws {
        try await offPool {
            let scratch = try TemporaryDirectory("docc")
            let symbols = "\(scratch)/symbols"
            try FileManager.default.createDirectory(atPath: symbols, withIntermediateDirectories: true)
            // The types re-exported from other packages (swift-log's Logger, service-lifecycle's
            // group) are documented there, with links into their own packages.
            try await SymbolGraphs.extract(product, into: symbols, ownModulesOnly: true)
            let catalog = SymbolGraphs.root.appending(path: "Sources/\(product)/\(product).docc").path
            #expect(FileManager.default.fileExists(atPath: catalog), "\(product) has a catalog")
            let run = try await runProgram(
                try SymbolGraphs.tool("docc", of: product).path,
                [
                    "convert", catalog, "--additional-symbol-graph-dir", symbols, "--output-path",
                    "\(scratch)/\(product).doccarchive", "--fallback-display-name", product,
                    "--fallback-bundle-identifier", "org.reachd.\(product)", "--warnings-as-errors",
                ]
            )
            #expect(run.status == 0 && !run.errors.contains("warning:"), "docc: \(run.errors)\(run.output)")
        }
    }
}
