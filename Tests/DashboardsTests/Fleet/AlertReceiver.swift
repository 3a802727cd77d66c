import Foundation
import ReachTesting
import Synchronization

/// Alertmanager's webhook receiver: Python's `http.server` on loopback, printing each notification
/// it receives (one JSON line with the time it arrived) for the test to read.
final class AlertReceiver: Sendable {
    /// One notification: a group's alerts as Alertmanager sent them.
    struct Notification: Sendable {
        /// When it arrived.
        var at: ContinuousClock.Instant
        var receiver: String
        /// `firing` or `resolved`.
        var status: String
        /// Each alert's labels and status.
        var alerts: [(labels: [String: String], status: String)]
    }

    let port: Int
    /// The receiver's process: its owner kills it.
    let child: ChildProcess
    private let seen = Mutex<(lines: Int, notifications: [Notification])>((0, []))

    private static let script = """
        import http.server, json, sys
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                print(json.dumps(json.loads(body), separators=(",", ":")), flush=True)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            def log_message(self, *_):
                pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    init(errorLog: String) async throws {
        child = try ChildProcess(
            "alert-receiver",
            executable: "/usr/bin/env",
            arguments: ["python3", "-c", Self.script],
            errorLog: errorLog
        )
        let line = try await child.waitForLine { Int($0) != nil }
        port = Int(line) ?? 0
    }

    var url: String { "http://127.0.0.1:\(port)/alerts" }

    /// Every notification so far, in order of arrival.
    var notifications: [Notification] {
        let lines = child.output
        return seen.withLock { seen in
            let now = ContinuousClock.now
            for line in lines.dropFirst(1 + seen.lines) {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                    continue
                }
                let alerts = (object["alerts"] as? [[String: Any]] ?? []).map { alert in
                    (labels: alert["labels"] as? [String: String] ?? [:], status: alert["status"] as? String ?? "")
                }
                seen.notifications.append(
                    Notification(
                        at: now,
                        receiver: object["receiver"] as? String ?? "",
                        status: object["status"] as? String ?? "",
                        alerts: alerts
                    )
                )
            }
            seen.lines = max(seen.lines, lines.count - 1)
            return seen.notifications
        }
    }
}
