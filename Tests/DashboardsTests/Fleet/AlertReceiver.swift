import Foundation
import ReachTestRigs
import Synchronization

/// Alertmanager's webhook receiver: a ``ReachTestRigs/WebhookReceiver``, whose requests are
/// Alertmanager's notifications.
final class AlertReceiver: Sendable {
    /// One notification: a group's alerts as Alertmanager sent them.
    struct Notification: Sendable {
        /// When it was first seen.
        var at: ContinuousClock.Instant
        var receiver: String
        /// `firing` or `resolved`.
        var status: String
        /// Each alert's labels and status.
        var alerts: [(labels: [String: String], status: String)]
    }

    private let webhooks: WebhookReceiver
    private let seen = Mutex<[Notification]>([])

    init() async throws {
        webhooks = try await WebhookReceiver(path: "/alerts")
    }

    var port: Int { webhooks.port }
    var url: String { webhooks.url }

    /// Every notification so far, in order of arrival.
    var notifications: [Notification] {
        let requests = webhooks.requests
        return seen.withLock { seen in
            let now = ContinuousClock.now
            for request in requests.dropFirst(seen.count) {
                let object = request["body"] as? [String: Any] ?? [:]
                let alerts = (object["alerts"] as? [[String: Any]] ?? []).map { alert in
                    (labels: alert["labels"] as? [String: String] ?? [:], status: alert["status"] as? String ?? "")
                }
                seen.append(
                    Notification(
                        at: now,
                        receiver: object["receiver"] as? String ?? "",
                        status: object["status"] as? String ?? "",
                        alerts: alerts
                    )
                )
            }
            return seen
        }
    }

    func stop() {
        webhooks.stop()
    }
}
