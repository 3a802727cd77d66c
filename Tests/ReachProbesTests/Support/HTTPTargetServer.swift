import Foundation
import ReachTesting

/// `Servers/http_targets.py` running as a child process: real HTTP(S) endpoints that misbehave on
/// purpose (slow, stalled, garbage, reset, self-signed TLS, a blackhole).
final class HTTPTargetServer: Sendable {
    struct Ports: Decodable {
        let http: Int
        let https: Int
        let blackhole: Int
        let ca: String
        let server_name: String
    }

    let ports: Ports
    private let process: Process
    private let stdin: Pipe
    /// The certificate and key: removed with the server.
    private let directory: TemporaryDirectory

    init() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Servers/http_targets.py")
        directory = try TemporaryDirectory("http-targets")
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, directory.path]
        stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        var line = Data()
        while true {
            let byte = stdout.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        ports = try JSONDecoder().decode(Ports.self, from: line)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(ports.http)\(path)" }
    func secureURL(_ path: String) -> String { "https://127.0.0.1:\(ports.https)\(path)" }

    /// Ends the server (closing its stdin ends it; the signal is the backstop).
    func stop() {
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }

    deinit { stop() }
}
