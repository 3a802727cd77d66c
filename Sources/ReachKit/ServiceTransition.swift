import ReachCore

/// A move between `connected` and `disconnected`, handed to every callback registered for its
/// direction: which way, the event that made it, and the verdict it arrived at.
///
/// Leaving `unknown` is not a transition (there was nothing to restore or lose), so the verdict is
/// always `connected` or `disconnected`, with the monitor's reason.
public struct ServiceTransition: Sendable, Hashable {
    /// `restored` (disconnected → connected) or `lost` (connected → disconnected).
    public var direction: TransitionDirection
    /// The sequence number of the event that made it (reachd's, or the embedded monitor's): a
    /// later transition has a higher one.
    public var sequence: UInt64
    /// The verdict it arrived at.
    public var verdict: ServiceVerdict

    /// A transition from its parts, for a test that calls a callback's body directly.
    public init(direction: TransitionDirection, sequence: UInt64, verdict: ServiceVerdict) {
        self.direction = direction
        self.sequence = sequence
        self.verdict = verdict
    }

    /// The embedded monitor's transition, its verdict read as reachd would carry it (see ``ServiceVerdict``).
    package init(_ transition: ConnectivityTransition) {
        self.init(
            direction: transition.direction,
            sequence: transition.sequence,
            verdict: ServiceVerdict(transition.verdict)
        )
    }

    /// The transition ``core`` was made from, back from the core's reaction rule as it was.
    init(core transition: ConnectivityTransition) {
        self.init(
            direction: transition.direction,
            sequence: transition.sequence,
            verdict: ServiceVerdict(core: transition.verdict)
        )
    }

    /// The core's transition, for its reaction rule (``ReachCore/TransitionReactions``).
    var core: ConnectivityTransition {
        ConnectivityTransition(direction: direction, sequence: sequence, verdict: verdict.coreVerdict)
    }
}
