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
    /// Read on threads of its own (``ChildProcess``): waiting for the ports holds no pool thread.
    private let child: ChildProcess
    /// The certificate and key: removed with the server.
    private let directory: TemporaryDirectory

    init() async throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Servers/http_targets.py")
        directory = try TemporaryDirectory("http-targets")
        child = try ChildProcess(
            "http_targets.py",
            executable: "/usr/bin/env",
            arguments: ["python3", script.path, directory.path]
        )
        let line = try await child.waitForLine(timeout: .seconds(30)) { _ in true }
        ports = try JSONDecoder().decode(Ports.self, from: Data(line.utf8))
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(ports.http)\(path)" }
    func secureURL(_ path: String) -> String { "https://127.0.0.1:\(ports.https)\(path)" }

    /// Ends the server: closing its stdin ends it; the signal is the backstop (Foundation reaps it).
    func stop() {
        child.closeInput()
        if child.isRunning { child.signal(SIGKILL) }
    }

    deinit { stop() }
}
