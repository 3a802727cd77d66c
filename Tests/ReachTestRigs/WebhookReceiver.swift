import Foundation
import ReachTesting

/// A real HTTP receiver of webhooks on loopback (`Servers/webhook_receiver.py`): it verifies
/// reachd's signature itself, answers as told (`--fail-first N`, `--never-accept`), and keeps every
/// request it got, parsed, with the time it came: reachd's webhooks and Alertmanager's
/// notifications alike.
package final class WebhookReceiver: Sendable {
    package let port: Int
    /// Where each request becomes one JSON line: the answer's status, whether the signature
    /// matched, the event headers, the body parsed (`body`) and as received (`raw`), and the time.
    package let logPath: String
    private let directory: TemporaryDirectory
    private let child: ChildProcess

    /// - Parameter options: `--fail-first N`, `--never-accept`, `--secret-file PATH`.
    package init(_ options: [String] = [], path: String = "/reachd") async throws {
        directory = try TemporaryDirectory("webhook")
        logPath = "\(directory)/requests.jsonl"
        child = try ChildProcess(
            "webhook-receiver",
            executable: "/usr/bin/python3",
            arguments: [StandInScripts.webhooks, logPath] + options
        )
        let line = try await child.waitForLine { Int($0) != nil }
        port = Int(line) ?? 0
        self.path = path
    }

    private let path: String

    package var url: String { "http://127.0.0.1:\(port)\(path)" }

    /// Every request the receiver got, in order.
    package var requests: [[String: Any]] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// Kills it without waiting: the test process may ignore SIGTERM (service-lifecycle's signal
    /// handling), and children inherit that.
    package func stop() {
        child.signal(SIGKILL)
    }

    deinit { child.signal(SIGKILL) }
}
