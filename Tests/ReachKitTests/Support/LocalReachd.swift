import Foundation
import ReachTesting

/// The products directory, where the test bundle, `reachd` and the helpers are built.
private let products = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()

/// A tiny HTTP server on a fixed loopback port that answers 200 on /api/v1/health, so that a test
/// can stop it and start it again on the same port.
final class HealthServer: Sendable {
    let port: Int
    private let child: ChildProcess

    init(port: Int) async throws {
        self.port = port
        let script = """
            import http.server
            class H(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    body = b'ok'
                    self.send_response(200 if self.path == '/api/v1/health' else 404)
                    self.send_header('Content-Length', str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *args):
                    pass
            http.server.ThreadingHTTPServer.allow_reuse_address = True
            s = http.server.ThreadingHTTPServer(('127.0.0.1', \(port)), H)
            print('ready', flush=True)
            s.serve_forever()
            """
        child = try ChildProcess("health-server", executable: "/usr/bin/python3", arguments: ["-c", script])
        try await child.waitForLine { $0 == "ready" }
    }

    func stop() async {
        child.signal(SIGKILL)
        await child.waitForExit()
    }

    /// A safety net for a test that ends early: the server must not outlive it.
    deinit { child.signal(SIGKILL) }
}

/// reachd as a process, watching a health server on loopback, with its status API on a fixed
/// port (and, when asked, a unix socket and a bearer token), so that a test can kill it and start
/// it again where its clients expect it.
final class LocalReachd: Sendable {
    let port: Int
    let directory: String
    private let child: ChildProcess

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// - Parameter extra: More YAML (a `socket:`, an `api:` section).
    init(watchingPort healthPort: Int, port: Int, directory: String, extra: String = "") async throws {
        self.port = port
        self.directory = directory
        let config = """
            server:
              base_url: http://127.0.0.1:\(healthPort)
              health_path: /api/v1/health
            probe:
              interval: 200ms
              timeout: 2s
              failures_before_down: 2   # one probe slowed by a loaded machine is not a loss
            \(extra)
            """
        let path = "\(directory)/reachd.yaml"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        child = try ChildProcess(
            "reachd", executable: products.appending(path: "reachd").path,
            arguments: ["--config", path, "--listen", "127.0.0.1:\(port)", "--log-target", "stderr"],
            errorLog: "\(directory)/reachd-\(UUID().uuidString.prefix(6)).log")
        try await waitUntil("reachd listening on \(port)", timeout: .seconds(30)) {
            await offPool { (try? loopbackGet(port: port, path: "/healthz", timeout: .seconds(1))) != nil }
        }
    }

    func signal(_ signal: Int32) { child.signal(signal) }

    func kill() async {
        child.signal(SIGKILL)
        await child.waitForExit()
    }

    /// A safety net for a test that ends early: reachd must not outlive it.
    deinit { child.signal(SIGKILL) }
}
