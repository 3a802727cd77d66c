import Foundation

/// A captive-portal API (RFC 8908) on loopback over HTTPS: it answers every GET with the JSON it
/// was last given (``answer(_:)``), as `application/captive+json`, and counts the requests and
/// their `Accept` headers.
package final class CaptivePortalAPIServer: Sendable {
    package let port: Int
    private let child: ChildProcess

    /// The API's URI, as networkd's `CAPTIVE_PORTAL=` would name it.
    package var url: String { "https://127.0.0.1:\(port)/captive" }

    package init(certificate: (certificate: String, key: String), answer json: String) async throws {
        let script = """
            import http.server, ssl, sys, threading
            state = {'answer': sys.argv[3].encode()}
            class API(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    print('request', self.headers.get('Accept', ''), flush=True)
                    body = state['answer']
                    self.send_response(200)
                    self.send_header('Content-Type', 'application/captive+json')
                    self.send_header('Content-Length', str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *args):
                    pass
            \(PythonHTTPS.serve("API"))
            for line in sys.stdin:
                state['answer'] = line.strip().encode()
                print('ack', flush=True)
            """
        child = try ChildProcess(
            "captive-portal-api", executable: "/usr/bin/python3", arguments: ["-u", "-c", script, certificate.certificate, certificate.key, json])
        let line = try await child.waitForLine { $0.hasPrefix("port ") }
        self.port = Int(line.dropFirst("port ".count)) ?? 0
    }

    /// Answers `json` from now on.
    package func answer(_ json: String) async throws {
        let before = child.output.filter { $0 == "ack" }.count
        try child.writeLine(json)
        try await waitUntil("the API takes its new answer") { self.child.output.filter { $0 == "ack" }.count > before }
    }

    /// The `Accept` header of every request so far.
    package var requests: [String] {
        child.output.filter { $0.hasPrefix("request") }.map { String($0.dropFirst("request".count)).trimmingCharacters(in: .whitespaces) }
    }

    package func stop() async {
        child.signal(SIGKILL)
        await child.waitForExit()
    }

    deinit { child.signal(SIGKILL) }
}
