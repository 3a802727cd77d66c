import Foundation

/// A tiny HTTP server (Python's http.server) on loopback that answers 200 on /api/v1/health: the
/// healthy server a test points reachd at. Given a port, it binds that one (address reuse on), so a
/// test can stop it and start it again where reachd expects it.
package final class HealthServer: Sendable {
    package let port: Int
    private let child: ChildProcess

    /// The health URL, as a target's `url:`.
    package var url: String { "http://127.0.0.1:\(port)/api/v1/health" }

    /// - Parameter port: 0 for any free port.
    package init(port: Int = 0) async throws {
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
            print('port', s.server_address[1], flush=True)
            s.serve_forever()
            """
        child = try ChildProcess("health-server", executable: "/usr/bin/python3", arguments: ["-c", script])
        let line = try await child.waitForLine { $0.hasPrefix("port ") }
        self.port = Int(line.dropFirst("port ".count)) ?? port
    }

    /// Kills the server without waiting, for clean-up that cannot wait.
    package func kill() {
        child.signal(SIGKILL)
    }

    /// Kills the server and waits until it is gone (its port is free again).
    package func stop() async {
        child.signal(SIGKILL)
        await child.waitForExit()
    }

    /// A safety net for a test that ends early: the server must not outlive it.
    deinit { child.signal(SIGKILL) }
}
