import ReachAPI

/// What the page shows from reachd's history: the last transitions, uptime per window, and each
/// target's recent latency. Built from the history document by the server when history is kept;
/// `nil` makes the page say plainly that there is none.
public struct PageHistory: Sendable, Hashable {
    /// A change of the verdict, as the history document carries it.
    public typealias Transition = HistoryDocument.Transition

    /// The uptime over one window (24 h, 7 d, ...), overall and in equal segments, oldest first.
    public struct Uptime: Sendable, Hashable {
        /// The window as a person reads it: `24 h`, `7 d`.
        public var label: String
        /// The fraction of the window's observed time that was connected; `nil` when nothing was observed.
        public var ratio: Double?
        /// The same fraction for each segment of the window, oldest first; `nil` where nothing was observed.
        public var segments: [Double?]
        /// Outages that overlap the window.
        public var outages: Int

        public init(label: String, ratio: Double?, segments: [Double?], outages: Int) {
            self.label = label
            self.ratio = ratio
            self.segments = segments
            self.outages = outages
        }
    }

    /// A target's latency in one minute (its median).
    public struct LatencyPoint: Sendable, Hashable {
        /// Seconds since the Unix epoch at the minute's start.
        public var epochSeconds: Double
        public var seconds: Double

        public init(epochSeconds: Double, seconds: Double) {
            self.epochSeconds = epochSeconds
            self.seconds = seconds
        }
    }

    /// The latest transitions, newest first (the page shows at most ``StatusPage/transitionLimit``).
    public var transitions: [Transition]
    /// One entry per window, shortest first.
    public var uptime: [Uptime]
    /// Each target's latency over the last minutes, oldest first, by target name.
    public var latency: [String: [LatencyPoint]]

    public init(transitions: [Transition], uptime: [Uptime], latency: [String: [LatencyPoint]] = [:]) {
        self.transitions = transitions
        self.uptime = uptime
        self.latency = latency
    }
}
