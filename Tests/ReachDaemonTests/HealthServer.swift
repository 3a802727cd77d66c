import Foundation

/// A tiny HTTP server that answers 200 on /api/v1/health.
struct HealthServer {
    let child: Child
    let url: String

    init() async throws {
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
            s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
            print('port', s.server_address[1], flush=True)
            s.serve_forever()
            """
        let child = try Child(URL(filePath: "/usr/bin/env"), ["python3", "-c", script], discardStderr: true)
        self.child = child
        let line = try await child.waitFor("\n", on: .output, timeout: .seconds(10))
        let port = line.drop { !$0.isNumber }.prefix { $0.isNumber }
        url = "http://127.0.0.1:\(port)/api/v1/health"
    }
}
