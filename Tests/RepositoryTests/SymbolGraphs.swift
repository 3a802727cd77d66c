import Foundation
import ReachTestRigs

/// The products' symbol graphs, read from the modules the build already made:
/// `swift-symbolgraph-extract` loads the `.swiftmodule` with the flags SwiftPM compiled it with, so
/// nothing is built again and nothing is written into the folder a running `swift test` holds.
enum SymbolGraphs {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The toolchain's tool `name` (`swift-symbolgraph-extract`, `docc`), beside the compiler that built `module`.
    static func tool(_ name: String, of module: String) throws -> URL {
        try BuildFolder.containingThisTest().compileArguments(of: module).compiler.deletingLastPathComponent()
            .appending(path: name)
    }

    /// Writes the public symbol graphs of `module` into `directory`, with the types it re-exports
    /// (from the package's own modules only, with `ownModulesOnly`).
    static func extract(_ module: String, into directory: String, ownModulesOnly: Bool = false) async throws {
        let compile = try BuildFolder.containingThisTest().compileArguments(of: module)
        let reexported = try reexportedModules(of: module).filter {
            !ownModulesOnly || FileManager.default.fileExists(atPath: root.appending(path: "Sources/\($0)").path)
        }
        var arguments = [
            "-module-name", module, "-output-dir", directory, "-module-cache-path", "\(directory)/cache",
            "-minimum-access-level", "public", "-skip-synthesized-members",
        ]
        if !reexported.isEmpty {
            arguments.append("-experimental-allowed-reexported-modules=\(reexported.joined(separator: ","))")
        }
        arguments += searchArguments(of: compile.arguments)
        let run = try await runProgram(try tool("swift-symbolgraph-extract", of: module).path, arguments)
        guard run.status == 0 else { throw Failed(description: "swift-symbolgraph-extract failed: \(run.errors)") }
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

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }
}
