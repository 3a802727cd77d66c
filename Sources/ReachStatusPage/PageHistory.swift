import ReachAPI

/// What the page shows from reachd's history: the last transitions, uptime per window, and each
/// target's recent latency. Built from the history document by the server when history is kept;
/// `nil` makes the page say plainly that there is none.
package struct PageHistory: Sendable, Hashable {
    /// A change of the verdict, as the history document carries it.
    package typealias Transition = HistoryDocument.Transition

    /// The uptime over one window (24 h, 7 d, ...), overall and in equal segments, oldest first.
    package struct Uptime: Sendable, Hashable {
        /// The window as a person reads it: `24 h`, `7 d`.
        package var label: String
        /// The fraction of the window's observed time that was connected; `nil` when nothing was observed.
        package var ratio: Double?
        /// The same fraction for each segment of the window, oldest first; `nil` where nothing was observed.
        package var segments: [Double?]
        /// Outages that overlap the window.
        package var outages: Int

        package init(label: String, ratio: Double?, segments: [Double?], outages: Int) {
            self.label = label
            self.ratio = ratio
            self.segments = segments
            self.outages = outages
        }
    }

    /// A target's latency in one minute (its median).
    package struct LatencyPoint: Sendable, Hashable {
        /// Seconds since the Unix epoch at the minute's start.
        package var epochSeconds: Double
        package var seconds: Double

        package init(epochSeconds: Double, seconds: Double) {
            self.epochSeconds = epochSeconds
            self.seconds = seconds
        }
    }

    /// The latest transitions, newest first (the page shows at most ``StatusPage/transitionLimit``).
    package var transitions: [Transition]
    /// One entry per window, shortest first.
    package var uptime: [Uptime]
    /// Each target's latency over the last minutes, oldest first, by target name.
    package var latency: [String: [LatencyPoint]]

    package init(transitions: [Transition], uptime: [Uptime], latency: [String: [LatencyPoint]] = [:]) {
        self.transitions = transitions
        self.uptime = uptime
        self.latency = latency
    }
}
