import ReachCore
import ReachSupport

/// One webhook: where reachd POSTs its transitions, signed how, and for how long it keeps trying.
package struct WebhookSettings: Sendable, Hashable {
    /// Names the webhook in logs and metrics.
    package var name: String
    /// An `http` or `https` URL.
    package var url: String
    /// The transitions it receives; both by default.
    package var events: Set<TransitionDirection>
    /// Signs every body with HMAC-SHA256 when set, so the receiver can tell reachd's POSTs from anyone else's.
    package var secret: Secret?
    /// The deadline of one attempt, connect to response.
    package var timeout: Duration
    /// Retrying stops this long after the first attempt started; the event is then given up.
    package var giveUpAfter: Duration
    /// The ceiling of the first retry's random delay; it doubles with each retry (full jitter).
    package var firstRetryDelay: Duration
    /// The largest ceiling a retry's delay grows to.
    package var maximumRetryDelay: Duration

    /// The defaults: both directions, unsigned, 10 s per attempt, given up after 5 minutes, retry
    /// ceilings from 1 s doubling to 60 s.
    package init(
        name: String,
        url: String,
        events: Set<TransitionDirection> = [.restored, .lost],
        secret: Secret? = nil,
        timeout: Duration = .seconds(10),
        giveUpAfter: Duration = .seconds(300),
        firstRetryDelay: Duration = .seconds(1),
        maximumRetryDelay: Duration = .seconds(60)
    ) {
        self.name = name
        self.url = url
        self.events = events
        self.secret = secret
        self.timeout = timeout
        self.giveUpAfter = giveUpAfter
        self.firstRetryDelay = firstRetryDelay
        self.maximumRetryDelay = maximumRetryDelay
    }
}
