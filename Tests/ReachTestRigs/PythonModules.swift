import Foundation

/// Python packages that tests use as independent peers (grpcio's health server and client).
package enum PythonModules {
    /// Whether `python3` (from PATH) can import `module`; installs `packages` with pip the first
    /// time it cannot.
    package static func importable(_ module: String, installing packages: [String]) -> Bool {
        if python(["-c", "import \(module)"]) == 0 { return true }
        _ = python(["-m", "pip", "install", "--quiet"] + packages)
        return python(["-c", "import \(module)"]) == 0
    }

    private static func python(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        do {
            try process.run()
        } catch {
            return -1
        }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
