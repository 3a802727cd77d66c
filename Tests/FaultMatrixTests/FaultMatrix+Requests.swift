import Foundation
import ReachTestRigs

/// Malformed and oversized requests to every endpoint of the live daemon, on its unix socket: each
/// gets a clear 4xx, reachd stays up, the verdict does not move, and the status still answers.
extension FaultMatrix {
    /// Sends each request on a connection of its own and prints the status line it got back.
    private static let client = #"""
        import select, socket, sys
        path = sys.argv[1]
        def ask(head, body=0):
            s = socket.socket(socket.AF_UNIX); s.connect(path); s.settimeout(5)
            s.sendall(head)
            answer, sent = b"", 0
            while not answer:
                readable, writable, _ = select.select([s], [s] if sent < body else [], [], 5)
                if readable:
                    try: answer = s.recv(200) or b"EOF"
                    except OSError as e: answer = b"ERROR " + str(e).encode()
                elif writable:
                    try: sent += s.send(b"z" * min(65536, body - sent))
                    except OSError as e: answer = b"ERROR " + str(e).encode()
                else:
                    answer = b"TIMEOUT"
            s.close()
            return answer.split(b"\r\n")[0].decode(errors="replace")
        for line in sys.stdin:
            name, method, target = line.split()
            start = f"{method} {target} HTTP/1.1\r\nHost: localhost\r\n".encode()
            if name == "oversized-header": print(name, target, ask(start + b"X-Big: " + b"a" * 70000 + b"\r\n\r\n"))
            if name == "oversized-uri": print(name, target, ask(f"{method} {target}?{'q' * 70000} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode()))
            if name == "oversized-body": print(name, target, ask(start + b"Content-Length: 2097152\r\n\r\n", body=2097152))
            if name == "wrong-method": print(name, target, ask(f"DELETE {target} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode()))
            if name == "garbage": print(name, target, ask(bytes(range(256)) * 8))
            if name == "bad-version": print(name, target, ask(f"{method} {target} HTTP/9.9\r\nHost: localhost\r\n\r\n".encode()))
            sys.stdout.flush()
        """#

    func badRequests(_ run: MatrixRun) async {
        let endpoints = [
            ("GET", "/v1/status"), ("GET", "/v1/events"), ("POST", "/v1/check"), ("GET", "/metrics"),
            ("GET", "/healthz"),
        ]
        let kinds = ["oversized-header", "oversized-uri", "oversized-body", "wrong-method", "bad-version"]
        let requests = endpoints.flatMap { method, path in kinds.map { "\($0) \(method) \(path)" } } + ["garbage GET /"]
        var row = MatrixCase(
            group: "bad input",
            name: "malformed and oversized requests to every endpoint (\(requests.count))",
            expected: "4xx each, verdict unmoved"
        )
        let start = ContinuousClock.now
        do {
            let answers = try await runProgram(
                "/usr/bin/python3",
                ["-c", Self.client, run.daemon.socketPath],
                input: requests.joined(separator: "\n") + "\n"
            )
            let lines = answers.output.split(separator: "\n")
            let wrong = lines.filter { line in
                let status = line.split(separator: " ").dropFirst(3).first.flatMap { Int($0) } ?? 0
                return !(400..<500).contains(status) || !line.contains("HTTP/1.1")
            }
            if lines.count != requests.count {
                row.failure = "\(lines.count) of \(requests.count) answered: \(answers.errors.suffix(300))"
            } else if !wrong.isEmpty {
                row.failure = "no 4xx: " + wrong.prefix(3).joined(separator: "; ")
            }
            let statusAnswers = await run.daemon.status() != nil
            if !run.daemon.isRunning { row.failure = "reachd exited: \(run.daemon.log.suffix(500))" }
            if !statusAnswers { row.failure = row.failure ?? "GET /v1/status no longer answers" }
            if let moved = run.observer.all.first(where: { $0.at >= start && $0.state != "connected" }) {
                row.failure = row.failure ?? "the verdict moved: \(moved.summary)"
            }
        } catch {
            row.failure = "the test could not act: \(error)"
        }
        run.finish(row)
    }
}
