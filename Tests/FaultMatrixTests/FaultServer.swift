import Foundation
import ReachTesting

/// The matrix's HTTP health server, in the server namespace, whose behaviour the test switches
/// line by line on its stdin: `ok`, `503`, `garbage`, `stall` (head, then a body that never
/// comes), `slow SECONDS`, `close` (nothing listens: refused), `open`, `restarting SECONDS`
/// (closed and reopened every 500 ms, down for a random 100–400 ms of each, then open). It answers `ack` once the switch is done.
final class FaultServer: Sendable {
    static let port = 8080
    /// An HTTPS server answering 200, with a certificate for another name (`other.test`).
    static let tlsPort = 8443
    private let child: ChildProcess

    private static let script = """
        import os, random, socket, sys, threading, time
        dual = os.environ.get('FAULT_SERVER_DUAL_STACK') == '1'
        state = {'mode': 'ok', 'delay': 0.0, 'listener': None}
        def serve(c):
            try:
                c.settimeout(30)
                data = b''
                while b'\\r\\n\\r\\n' not in data:
                    chunk = c.recv(4096)
                    if not chunk:
                        return
                    data += chunk
                mode, delay = state['mode'], state['delay']
                if mode == 'slow':
                    time.sleep(delay)
                if mode in ('ok', 'slow'):
                    c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\nok')
                elif mode == '503':
                    c.sendall(b'HTTP/1.1 503 Service Unavailable\\r\\nContent-Length: 4\\r\\nConnection: close\\r\\n\\r\\nbusy')
                elif mode == 'garbage':
                    c.sendall(b'\\x00\\xff\\xfe garbage, not HTTP \\x01\\x02\\r\\n\\r\\n' * 8)
                elif mode == 'stall':
                    c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Length: 100\\r\\nConnection: close\\r\\n\\r\\nok')
                    time.sleep(30)
            except OSError:
                pass
            finally:
                c.close()
        def accept(s):
            while True:
                try:
                    c, _ = s.accept()
                except OSError:
                    return
                threading.Thread(target=serve, args=(c,), daemon=True).start()
        def open_():
            if state['listener'] is None:
                s = socket.socket(socket.AF_INET6 if dual else socket.AF_INET, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if dual:
                    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
                s.bind(('::' if dual else '0.0.0.0', \(port)))
                s.listen(128)
                state['listener'] = s
                threading.Thread(target=accept, args=(s,), daemon=True).start()
        def close():
            s, state['listener'] = state['listener'], None
            if s is not None:
                s.shutdown(socket.SHUT_RDWR)
                s.close()
        open_()
        if len(sys.argv) > 2:
            import http.server, ssl
            class Healthy(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response(200); self.send_header('Content-Length', '2'); self.end_headers(); self.wfile.write(b'ok')
                def log_message(self, *args):
                    pass
            tls = http.server.ThreadingHTTPServer(('0.0.0.0', \(tlsPort)), Healthy)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[1], sys.argv[2])
            tls.socket = context.wrap_socket(tls.socket, server_side=True)
            threading.Thread(target=tls.serve_forever, daemon=True).start()
        print('ready', flush=True)
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] == 'close':
                close()
            elif words[0] == 'open':
                open_()
            elif words[0] == 'restarting':
                end = time.monotonic() + float(words[1])
                while time.monotonic() < end:
                    down = random.uniform(0.1, 0.4)
                    close(); time.sleep(down); open_(); time.sleep(0.5 - down)
                open_()
            else:
                state['mode'] = words[0]
                state['delay'] = float(words[1]) if len(words) > 1 else 0.0
            print('ack', line.strip(), flush=True)
        """

    /// - Parameters:
    ///   - certificate: A certificate and key (PEM files) for the HTTPS server on ``tlsPort``.
    ///   - dualStack: Whether the HTTP server listens on IPv6 as well (else on IPv4 only).
    init(namespace: String, certificate: (certificate: String, key: String)? = nil, dualStack: Bool = false) throws {
        child = try ChildProcess(
            "fault-server",
            executable: MatrixNetwork.ipPath,
            arguments: ["netns", "exec", namespace, "/usr/bin/env", "python3", "-u", "-c", Self.script]
                + (certificate.map { [$0.certificate, $0.key] } ?? []),
            environment: ProcessInfo.processInfo.environment.merging(["FAULT_SERVER_DUAL_STACK": dualStack ? "1" : "0"])
            { $1 }
        )
    }

    /// Makes a self-signed certificate for `name.test` in `directory`; returns its files.
    static func makeCertificate(
        in directory: String,
        name: String = "other"
    ) async throws -> (certificate: String, key: String) {
        let (certificate, key) = ("\(directory)/\(name).pem", "\(directory)/\(name).key")
        let result = try await runProgram(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                "-out", certificate,
                "-days", "2", "-subj", "/CN=\(name).test", "-addext", "subjectAltName=DNS:\(name).test",
            ]
        )
        guard result.status == 0 else { throw ChildProcess.Failed(description: "openssl failed: \(result.errors)") }
        return (certificate, key)
    }

    var processIdentifier: Int32 { child.processIdentifier }

    func waitUntilReady() async throws {
        try await child.waitForLine(timeout: .seconds(20)) { $0 == "ready" }
    }

    /// Switches the behaviour and waits until the server says it has.
    func set(_ command: String, timeout: Duration = .seconds(20)) async throws {
        let before = child.output.count
        try child.writeLine(command)
        let child = child
        do {
            try await waitUntil("the fault server to take \(command)", timeout: timeout) {
                child.output.dropFirst(before).contains("ack \(command)")
            }
        } catch is TimedOutWaiting {
            throw ChildProcess.Failed(description: "the fault server did not take \(command)")
        }
    }

    func stop() async {
        child.closeInput()
        child.signal(SIGKILL)
        await child.waitForExit(timeout: .seconds(5))
    }
}
