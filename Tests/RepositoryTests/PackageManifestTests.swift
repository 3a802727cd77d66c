import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// Keeps Package.swift true to the code: every target declares exactly the modules its files
/// import, no more (a dependency nobody imports still costs every build and, for a library, every
/// program that links it) and no less (a module reached only through another target's dependencies
/// breaks the day that target drops it).
@Suite("Package.swift declares what the code imports")
struct PackageManifestTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Modules of the toolchain and the platform, which no manifest declares.
    static let toolchainModules: Set = [
        "Foundation", "FoundationEssentials", "FoundationNetworking", "CoreFoundation", "Glibc", "Musl", "Darwin",
        "Dispatch",
        "Synchronization", "Testing", "XCTest", "_Concurrency",
    ]

    /// What `swift package describe --type json` says of a target.
    struct Target: Decodable {
        var name: String
        var type: String
        var path: String
        var sources: [String]?
        var targetDependencies: [String]?
        var productDependencies: [String]?
    }

    private struct Description: Decodable {
        var targets: [Target]
    }

    /// The manifest as SwiftPM reads it, from a scratch folder of its own so that it never waits
    /// for the build folder that a running `swift test` holds. The scratch folder is its TMPDIR
    /// too, so that the lock files and directories SwiftPM leaves there go with it.
    static func targets() async throws -> [Target] {
        let scratch = try TemporaryDirectory("describe")
        // Off the cooperative pool (runProgram): describing the package takes seconds.
        let described = try await runProgram(
            "/usr/bin/env",
            [
                "swift", "package", "--package-path", root.path, "--scratch-path", "\(scratch)/build", "describe",
                "--type", "json",
            ],
            environment: ProcessInfo.processInfo.environment.merging(["TMPDIR": scratch.path]) { _, new in new }
        )
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(Description.self, from: Data(described.output.utf8)).targets
    }

    /// The modules a Swift file imports: `import X`, `@testable import X`, `import struct X.Y`.
    static func imports(of file: URL) throws -> Set<String> {
        let pattern = /^(?:@\w+\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)/
        var modules: Set<String> = []
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
            if let match = line.firstMatch(of: pattern) { modules.insert(String(match.1)) }
        }
        return modules
    }

    @Test func everyTargetDeclaresExactlyWhatItsFilesImport() async throws {
        try await offPool {
            let targets = try await Self.targets()
            #expect(targets.count > 20, "swift package describe listed the package's targets")
            let executables = Set(targets.filter { $0.type == "executable" }.map(\.name))
            for target in targets {
                let swiftFiles = (target.sources ?? []).filter { $0.hasSuffix(".swift") }
                guard !swiftFiles.isEmpty else { continue }
                var imported: Set<String> = []
                for file in swiftFiles {
                    imported.formUnion(
                        try Self.imports(of: Self.root.appending(path: target.path).appending(path: file))
                    )
                }
                imported.subtract(Self.toolchainModules)
                // A test that runs a program depends on it to have it built, without importing it.
                let declared = Set((target.targetDependencies ?? []) + (target.productDependencies ?? [])).subtracting(
                    executables
                )
                #expect(
                    imported.subtracting(declared).isEmpty,
                    "\(target.name) imports \(imported.subtracting(declared).sorted()) without declaring them"
                )
                #expect(
                    declared.subtracting(imported).isEmpty,
                    "\(target.name) declares \(declared.subtracting(imported).sorted()) but no file imports them"
                )
            }
        }
    }
}
