import Prometheus
import ReachCore

/// Hook runs and webhook deliveries: `reachd_hook_runs_total{hook,result}`,
/// `reachd_hook_duration_seconds{hook}` and `reachd_webhook_deliveries_total{webhook,result}`.
///
/// Labels stay bounded: results are fixed sets, webhooks come from the configuration, and the hook
/// runner names at most 64 hooks (later ones share `other`). Series for the hooks and webhooks known
/// at start exist from then on, at 0.
extension ReachMetrics: ReactionObserver {
    /// The upper bounds of `reachd_hook_duration_seconds`: a quick script to one killed at a long timeout.
    static let hookDurationBuckets: [Duration] = [
        .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(500), .seconds(1), .milliseconds(2500),
        .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(120),
    ]

    /// Creates every series of the hooks and webhooks known at start, at 0.
    package func reactionsConfigured(hooks: [String], webhooks: [String]) {
        for hook in hooks {
            _ = registry.makeDurationHistogram(
                descriptor: Self.hookDurationName,
                labels: [("hook", hook)],
                buckets: Self.hookDurationBuckets
            )
            for outcome in HookOutcome.allCases {
                _ = registry.makeCounter(
                    descriptor: Self.hookRunsName,
                    labels: [("hook", hook), ("result", outcome.rawValue)]
                )
            }
        }
        for webhook in webhooks {
            for outcome in WebhookOutcome.allCases {
                _ = registry.makeCounter(
                    descriptor: Self.webhookDeliveriesName,
                    labels: [("webhook", webhook), ("result", outcome.rawValue)]
                )
            }
        }
    }

    /// Counts the run and, unless the file was refused, records its duration.
    package func hookFinished(_ hook: String, outcome: HookOutcome, duration: Duration) {
        registry.makeCounter(descriptor: Self.hookRunsName, labels: [("hook", hook), ("result", outcome.rawValue)])
            .increment()
        guard outcome != .refused else { return }
        registry.makeDurationHistogram(
            descriptor: Self.hookDurationName,
            labels: [("hook", hook)],
            buckets: Self.hookDurationBuckets
        )
        .record(duration)
    }

    /// Counts the delivery by its result.
    package func webhookFinished(_ webhook: String, outcome: WebhookOutcome) {
        registry.makeCounter(
            descriptor: Self.webhookDeliveriesName,
            labels: [("webhook", webhook), ("result", outcome.rawValue)]
        ).increment()
    }
}
