import Foundation

/// A health endpoint over HTTPS on 127.0.0.1 (python3's `ssl`): it answers every GET with 200
/// `ok`, presenting the certificate chain it was given, e.g. one ``PrivateCA`` issued that expires
/// in three days.
package final class LoopbackHTTPSServer: Sendable {
    package let port: Int
    private let child: ChildProcess

    /// A URL of the server, by address (the ``PrivateCA`` certificates name 127.0.0.1 too).
    package var url: String { "https://127.0.0.1:\(port)/healthz" }

    /// - Parameter certificate: The PEM chain (leaf first) and the leaf's key.
    package init(certificate: (certificate: String, key: String)) async throws {
        let script = """
            import http.server, ssl, sys, threading
            class Health(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response(200)
                    self.send_header('Content-Length', '2')
                    self.end_headers()
                    self.wfile.write(b'ok')
                def log_message(self, *args):
                    pass
            \(PythonHTTPS.serve("Health"))
            threading.Event().wait()
            """
        child = try ChildProcess(
            "https-health",
            executable: "/usr/bin/python3",
            arguments: ["-u", "-c", script, certificate.certificate, certificate.key]
        )
        let line = try await child.waitForLine { $0.hasPrefix("port ") }
        port = Int(line.dropFirst("port ".count)) ?? 0
    }

    package func stop() async {
        child.signal(SIGKILL)
        await child.waitForExit()
    }

    deinit { child.signal(SIGKILL) }
}
