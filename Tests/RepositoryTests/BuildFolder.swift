import Foundation

/// The build manifest of the folder SwiftPM built this test into (`.build/<configuration>.yaml` for
/// `.build/<triple>/<configuration>`): it holds the command each module was compiled with.
struct BuildFolder {
    var manifest: URL

    /// Found upwards from the running test bundle, wherever the scratch path is.
    static func containingThisTest() throws -> BuildFolder {
        let test = Bundle.main.executableURL ?? URL(filePath: CommandLine.arguments[0])
        var products = test.resolvingSymlinksInPath().deletingLastPathComponent()
        while products.path != "/" {
            let manifest = products.deletingLastPathComponent().deletingLastPathComponent().appending(
                path: "\(products.lastPathComponent).yaml"
            )
            if FileManager.default.fileExists(atPath: manifest.path) { return BuildFolder(manifest: manifest) }
            products.deleteLastPathComponent()
        }
        throw Missing(what: "the build manifest above \(test.path)")
    }

    /// The compiler and its arguments for the command that emits `module`'s `.swiftmodule`.
    func compileArguments(of module: String) throws -> (compiler: URL, arguments: [String]) {
        let text = try String(contentsOf: manifest, encoding: .utf8)
        guard let command = text.range(of: "\n  \"C.\(module)-") else {
            throw Missing(what: "\(module)'s compile command in \(manifest.path)")
        }
        let rest = text[command.upperBound...]
        guard let argumentsLine = rest.split(separator: "\n").first(where: { $0.hasPrefix("    args: [") }),
            let arguments = try? JSONDecoder().decode(
                [String].self,
                from: Data(argumentsLine.dropFirst("    args: ".count).utf8)
            ),
            let compiler = arguments.first
        else { throw Missing(what: "\(module)'s compiler arguments in \(manifest.path)") }
        return (URL(filePath: compiler), Array(arguments.dropFirst()))
    }

    struct Missing: Error, CustomStringConvertible {
        var what: String
        var description: String { "cannot find \(what); build first (swift build --build-tests)" }
    }
}
