/// Sees every hook run and webhook delivery: the metrics, without the hook runner knowing about
/// Prometheus.
package protocol ReactionObserver: Sendable {
    /// Called once at start with the hooks and webhooks known then, so their series exist before
    /// anything runs.
    func reactionsConfigured(hooks: [String], webhooks: [String])
    /// A hook ran (or was refused, or could not start).
    func hookFinished(_ hook: String, outcome: HookOutcome, duration: Duration)
    /// A webhook delivery ended.
    func webhookFinished(_ webhook: String, outcome: WebhookOutcome)
}

/// How a hook run ended, as a metrics label.
package enum HookOutcome: String, Sendable, CaseIterable {
    /// Exited 0.
    case ok
    /// Exited non-zero or died of a signal it was not sent.
    case failed
    /// Outlived its timeout; its process group was killed.
    case timedOut = "timed_out"
    /// The executable could not be started.
    case notStarted = "not_started"
    /// The file breaks the hook rules (owner, mode, type) and was not run.
    case refused
    /// reachd stopped while it ran.
    case cancelled
}

/// How a webhook delivery ended, as a metrics label.
package enum WebhookOutcome: String, Sendable, CaseIterable {
    /// A 2xx answer.
    case delivered
    /// No 2xx answer within the retry budget.
    case gaveUp = "gave_up"
    /// reachd stopped while it was still trying.
    case cancelled
}
