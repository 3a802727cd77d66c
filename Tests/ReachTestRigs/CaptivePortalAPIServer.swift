import Foundation

/// A captive-portal API (RFC 8908) over HTTPS, on loopback or on an address of a network
/// namespace: it answers every GET with the JSON it was last given (``answer(_:)``), as
/// `application/captive+json`, and counts the requests and their `Accept` headers.
package final class CaptivePortalAPIServer: Sendable {
    package let port: Int
    private let child: ChildProcess

    /// The API's URI on loopback, as networkd's `CAPTIVE_PORTAL=` would name it.
    package var url: String { "https://127.0.0.1:\(port)/captive" }

    /// - Parameters:
    ///   - host: The address to listen on, in `namespace` when one is given.
    ///   - namespace: A network namespace (`ip netns`) to run in; the test's own when `nil`.
    package init(
        certificate: (certificate: String, key: String),
        answer json: String,
        host: String = "127.0.0.1",
        namespace: String? = nil
    ) async throws {
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
            \(PythonHTTPS.serve("API", host: host))
            for line in sys.stdin:
                state['answer'] = line.strip().encode()
                print('ack', flush=True)
            """
        let python = ["/usr/bin/python3", "-u", "-c", script, certificate.certificate, certificate.key, json]
        child = try ChildProcess(
            "captive-portal-api",
            executable: namespace == nil ? python[0] : TestNamespace.ipPath,
            arguments: namespace.map { ["netns", "exec", $0] + python } ?? Array(python.dropFirst())
        )
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
        child.output.filter { $0.hasPrefix("request") }.map {
            String($0.dropFirst("request".count)).trimmingCharacters(in: .whitespaces)
        }
    }

    package func stop() async {
        child.signal(SIGKILL)
        await child.waitForExit()
    }

    deinit { child.signal(SIGKILL) }
}
