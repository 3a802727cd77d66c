import Foundation
import ReachTestRigs

/// Debian's `promtool` (package `prometheus`), which lints a metrics exposition.
enum Promtool {
    static let path: String? = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Runs `promtool check metrics` on `exposition`; returns its exit status and everything it printed.
    static func checkMetrics(_ exposition: String) async throws -> (status: Int32, output: String) {
        guard let path else { return (-1, "promtool not installed") }
        let result = try await runProgram(path, ["check", "metrics"], input: exposition)
        return (result.status, result.output + result.errors)
    }
}
