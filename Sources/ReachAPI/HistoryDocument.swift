/// `GET /v1/history`'s answer: what reachd recorded over a window, as JSON. It answers "how often
/// did we lose the server this week, and for how long?" after restarts, from reachd's own store.
///
/// The same stability rules as ``StatusDocument``: snake_case keys, every key written, `null` for
/// "not known", never a missing key. Times are RFC 3339 in UTC with milliseconds.
///
/// Without a target, ``transitions`` and ``outages`` are the unified verdict's; with one, they are
/// that target's health changes (`healthy`, `unhealthy`, `unknown`) and its unhealthy spells.
/// Time reachd did not record (it was not running) or had no verdict for (`unknown`) is in
/// ``gaps``: neither uptime nor downtime.
package struct HistoryDocument: Codable, Sendable, Hashable {
    /// The most transitions one answer lists: the newest are kept.
    package static let transitionLimit = 1000
    /// The most outages one answer lists: the newest are kept (``uptime`` counts them all).
    package static let outageLimit = 10_000
    /// The most gaps one answer lists: the newest are kept (``uptime`` counts them all).
    package static let gapLimit = 10_000
    /// The most minutes an answer for one target lists: a day's worth, the newest kept.
    package static let targetMinuteLimit = 1440
    /// How far back an answer without a target lists every target's minutes: the window's last 10 minutes.
    package static let allTargetsMinuteSpan: Duration = .seconds(600)
    /// The most minutes an answer without a target lists: the newest are kept.
    package static let allTargetsMinuteLimit = 10_000

    /// The window's start, as resolved (a duration like `24h` becomes a time).
    package var since: String
    /// The window's end: the request's `until`, or the time of the answer.
    package var until: String
    /// The target asked about; `null` for the unified verdict.
    @Nullable package var target: String?
    /// State changes inside the window, oldest first; at most ``transitionLimit``, the newest kept.
    package var transitions: [Transition]
    /// Spells of `disconnected` (or, for a target, `unhealthy`) overlapping the window, oldest
    /// first; at most ``outageLimit``, the newest kept. Not clipped to the window: `start` may precede `since`.
    package var outages: [Outage]
    /// Spells of an impaired quality (connected, but slow or lossy) overlapping the window, oldest
    /// first, for the unified verdict (empty for a target): `reason` names the measures past their
    /// budget (`latency`, `loss,latency`), `fault` where (`server`, `gateway`, `link`), `target`
    /// the impaired target. At most ``outageLimit``, the newest kept; they do not count against uptime.
    @AddedLater package var impaired: [Outage] = []
    /// Spells without a verdict overlapping the window (reachd not running, or `unknown`), oldest first.
    package var gaps: [Gap]
    /// The window's uptime, from every outage and gap in it.
    package var uptime: Uptime
    /// Per-target per-minute rollups, oldest first: with `target`, that target's minutes in the
    /// window (at most ``targetMinuteLimit``); without, every target's minutes of the window's
    /// last ``allTargetsMinuteSpan`` (at most ``allTargetsMinuteLimit``). The newest are kept.
    package var minutes: [Minute]

    package init(
        since: String,
        until: String,
        target: String? = nil,
        transitions: [Transition] = [],
        outages: [Outage] = [],
        gaps: [Gap] = [],
        uptime: Uptime,
        minutes: [Minute] = [],
        impaired: [Outage] = []
    ) {
        self.impaired = impaired
        self.since = since
        self.until = until
        self.target = target
        self.transitions = transitions
        self.outages = outages
        self.gaps = gaps
        self.uptime = uptime
        self.minutes = minutes
    }

    /// One recorded change of state.
    package struct Transition: Codable, Sendable, Hashable {
        package var at: String
        /// `connected`, `disconnected`, `unknown`; for a target, `healthy`, `unhealthy`, `unknown`.
        package var state: String
        /// The verdict's reason code (``StatusDocument/reason``), or the target's failure code; `null` for a healthy target.
        @Nullable package var reason: String?
        /// ``StatusDocument/fault`` at that time; `null` unless disconnected (or unhealthy).
        @Nullable package var fault: String?
        /// The failing target for the verdict (``StatusDocument/target``); the target itself for a target's change.
        @Nullable package var target: String?

        package init(at: String, state: String, reason: String?, fault: String? = nil, target: String? = nil) {
            self.at = at
            self.state = state
            self.reason = reason
            self.fault = fault
            self.target = target
        }
    }

    /// A spell of `disconnected` (or a target's `unhealthy`): from the transition into it to the next
    /// transition out of it, or to the end of reachd's recording when it stopped (or was killed) meanwhile.
    package struct Outage: Codable, Sendable, Hashable {
        package var start: String
        /// `null` while it lasts.
        @Nullable package var end: String?
        /// `end - start`, or `until - start` while it lasts.
        package var durationSeconds: Double
        /// The reason that held longest while it lasted (the first of equals): a server killed with a
        /// probe in flight is `connection_reset` for a moment, then `connection_refused`. The
        /// transitions keep every change.
        @Nullable package var reason: String?
        @Nullable package var fault: String?
        @Nullable package var target: String?

        package init(
            start: String,
            end: String?,
            durationSeconds: Double,
            reason: String?,
            fault: String?,
            target: String?
        ) {
            self.start = start
            self.end = end
            self.durationSeconds = durationSeconds
            self.reason = reason
            self.fault = fault
            self.target = target
        }

        enum CodingKeys: String, CodingKey {
            case start, end
            case durationSeconds = "duration_seconds"
            case reason, fault, target
        }
    }

    /// A spell without a verdict: reachd was not running (nothing recorded), or its verdict was `unknown`.
    package struct Gap: Codable, Sendable, Hashable {
        package var start: String
        /// `null` while it lasts.
        @Nullable package var end: String?

        package init(start: String, end: String?) {
            self.start = start
            self.end = end
        }
    }

    /// How a window's time divides: see ``Uptime/init(window:outages:gaps:)``.
    package struct Uptime: Codable, Sendable, Hashable {
        /// `connected / (connected + disconnected)`: unknown time counts neither way. `null` when
        /// the window has no known time at all.
        @Nullable package var ratio: Double?
        package var connectedSeconds: Double
        package var disconnectedSeconds: Double
        package var unknownSeconds: Double

        package init(ratio: Double?, connectedSeconds: Double, disconnectedSeconds: Double, unknownSeconds: Double) {
            self.ratio = ratio
            self.connectedSeconds = connectedSeconds
            self.disconnectedSeconds = disconnectedSeconds
            self.unknownSeconds = unknownSeconds
        }

        enum CodingKeys: String, CodingKey {
            case ratio
            case connectedSeconds = "connected_seconds"
            case disconnectedSeconds = "disconnected_seconds"
            case unknownSeconds = "unknown_seconds"
        }
    }

    /// One target's probes in one minute.
    package struct Minute: Codable, Sendable, Hashable {
        package var target: String
        /// The minute's start.
        package var start: String
        /// Probes that finished in the minute.
        package var probes: Int
        /// Failed probes by failure code (`timeout`, `connection_refused`, ...); `{}` when none failed.
        package var failures: [String: Int]
        /// The median duration of the minute's probes, failed ones included; `null` without probes.
        @Nullable package var latencyP50Seconds: Double?
        /// The 99th percentile of the same.
        @Nullable package var latencyP99Seconds: Double?

        package init(
            target: String,
            start: String,
            probes: Int,
            failures: [String: Int],
            latencyP50Seconds: Double?,
            latencyP99Seconds: Double?
        ) {
            self.target = target
            self.start = start
            self.probes = probes
            self.failures = failures
            self.latencyP50Seconds = latencyP50Seconds
            self.latencyP99Seconds = latencyP99Seconds
        }

        enum CodingKeys: String, CodingKey {
            case target, start, probes, failures
            case latencyP50Seconds = "latency_p50_seconds"
            case latencyP99Seconds = "latency_p99_seconds"
        }
    }
}
