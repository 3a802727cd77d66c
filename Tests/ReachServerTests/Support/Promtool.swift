import Foundation

/// Debian's `promtool` (package `prometheus`), which lints a metrics exposition.
enum Promtool {
    static let path: String? = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Runs `promtool check metrics` on `exposition`; returns its exit status and everything it printed.
    static func checkMetrics(_ exposition: String) throws -> (status: Int32, output: String) {
        guard let path else { return (-1, "promtool not installed") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["check", "metrics"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(Data(exposition.utf8))
        try input.fileHandleForWriting.close()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: printed, as: UTF8.self))
    }
}
