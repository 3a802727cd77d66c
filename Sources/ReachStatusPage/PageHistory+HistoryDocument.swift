import ReachAPI
import ReachCore
import ReachSupport

extension PageHistory {
    /// The windows the page draws, each with how many segments its bar has (an hour, six hours, a day, a day).
    static let windows: [(label: String, days: Int, segments: Int)] = [
        ("24 h", 1, 24), ("7 d", 7, 28), ("30 d", 30, 30), ("90 d", 90, 90),
    ]

    /// The longest window: what the server asks the history for.
    package static let span: Duration = .seconds(90 * 86_400)

    /// What the page shows from a history document over (at least) the last ``span`` without a target:
    /// its last transitions, newest first; uptime per window and segment from the document's one
    /// uptime computation (``ReachAPI/HistoryDocument/uptime(over:)``); each target's median latency per minute.
    package init(document: HistoryDocument, now: WallTime) {
        let transitions = document.transitions.suffix(StatusPage.transitionLimit).reversed()
        let uptime = Self.windows.map { window in
            let span = Duration.seconds(window.days * 86_400)
            let start = WallTime(sinceEpoch: now.sinceEpoch - span)
            let segment = span / window.segments
            let segments = (0..<window.segments).map { index in
                let lower = start.advanced(by: segment * index)
                return document.uptime(over: lower..<lower.advanced(by: segment)).ratio
            }
            let outages = document.outages.filter { outage in
                (outage.end.flatMap(RFC3339.wallTime(from:)) ?? now) > start
            }.count
            return Uptime(
                label: window.label,
                ratio: document.uptime(over: start..<now).ratio,
                segments: segments,
                outages: outages
            )
        }
        var latency: [String: [LatencyPoint]] = [:]
        for minute in document.minutes {
            guard let median = minute.latencyP50Seconds, let start = RFC3339.wallTime(from: minute.start) else {
                continue
            }
            latency[minute.target, default: []].append(
                LatencyPoint(epochSeconds: start.secondsSinceEpoch, seconds: median)
            )
        }
        self.init(transitions: Array(transitions), uptime: uptime, latency: latency)
    }
}
