import Foundation
import ReachTesting

/// A captive portal as hotels and airports build one, in the matrix's server namespace: a web
/// server that answers every request in the server's place (``MatrixNetwork/setPortal(_:)`` sends
/// the host's TCP 80, 8080, 443 and 8443 to it with nftables DNAT), and the open internet's check
/// URL, which answers 204 while nothing intercepts it.
///
/// The portal's flavour is switched on its stdin: `redirect` (302 to its login page on another
/// host, what most portals do) or `login` (the login page itself, 200 `text/html`, for every path:
/// what fools a health check into `connected`). Its HTTPS port presents a certificate of its own.
final class PortalServer: Sendable {
    static let address = "198.51.100.7"
    static let port = 9090
    static let tlsPort = 9443
    /// The check URL's host: a server of the "internet" that answers 204.
    static let checkAddress = "198.51.100.6"
    static let checkURL = "http://\(checkAddress)/generate_204"
    /// Where the redirect flavour sends people.
    static let signInURL = "http://portal.test/login?venue=matrix"

    private let child: ChildProcess

    private static let script = """
        import http.server, ssl, sys, threading
        state = {'mode': 'redirect'}
        class Portal(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if state['mode'] == 'redirect':
                    self.send_response(302)
                    self.send_header('Location', '\(signInURL)')
                    self.send_header('Content-Length', '0')
                    self.end_headers()
                else:
                    page = b'<html><body><form>Sign in to Matrix Wi-Fi</form></body></html>'
                    self.send_response(200)
                    self.send_header('Content-Type', 'text/html')
                    self.send_header('Content-Length', str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
            def log_message(self, *args):
                pass
        class Check(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(204); self.end_headers()
            def log_message(self, *args):
                pass
        def serve(server):
            threading.Thread(target=server.serve_forever, daemon=True).start()
        serve(http.server.ThreadingHTTPServer(('\(address)', \(port)), Portal))
        tls = http.server.ThreadingHTTPServer(('\(address)', \(tlsPort)), Portal)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        tls.socket = context.wrap_socket(tls.socket, server_side=True)
        serve(tls)
        serve(http.server.ThreadingHTTPServer(('\(checkAddress)', 80), Check))
        print('ready', flush=True)
        for line in sys.stdin:
            state['mode'] = line.strip()
            print('ack', line.strip(), flush=True)
        """

    /// - Parameter certificate: The portal's own certificate and key (for `portal.test`), which no target trusts.
    init(namespace: String, certificate: (certificate: String, key: String)) throws {
        child = try ChildProcess(
            "portal-server",
            executable: MatrixNetwork.ipPath,
            arguments: [
                "netns", "exec", namespace, "/usr/bin/env", "python3", "-u", "-c", Self.script, certificate.certificate,
                certificate.key,
            ]
        )
    }

    func waitUntilReady() async throws {
        try await child.waitForLine(timeout: .seconds(20)) { $0 == "ready" }
    }

    /// Switches the flavour (`redirect` or `login`) and waits until the server says it has.
    func set(_ flavour: String) async throws {
        let before = child.output.count
        try child.writeLine(flavour)
        try await waitUntil("the portal takes \(flavour)", timeout: .seconds(20)) {
            self.child.output.dropFirst(before).contains("ack \(flavour)")
        }
    }

    func stop() async {
        child.closeInput()
        child.signal(SIGKILL)
        await child.waitForExit(timeout: .seconds(5))
    }
}
