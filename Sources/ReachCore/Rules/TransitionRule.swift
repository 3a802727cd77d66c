/// What a transition is, decided in one place for every side that runs callbacks: the monitor's
/// combiner, and the services that learn their verdicts from outside the core (ReachKit's follower
/// of reachd, its test kit).
///
/// A move between `connected` and `disconnected` is a transition; `unknown` is none, and neither is
/// leaving it: a follower that loses reachd for a moment (`unknown`) and finds the verdict as it was
/// runs no callback, one that finds it changed runs one.
package struct TransitionRule: Sendable, Hashable {
    /// The last `connected` or `disconnected` taken: what the next transition moves from.
    package private(set) var lastDefinite: ConnectivityState?

    /// A rule that has seen `initial` (`unknown` when nothing is known yet).
    package init(initial: ConnectivityState = .unknown) {
        lastDefinite = initial == .unknown ? nil : initial
    }

    /// Takes the next verdict's state; returns the transition it makes, if any.
    package mutating func next(_ state: ConnectivityState) -> TransitionDirection? {
        guard state != .unknown else { return nil }
        defer { lastDefinite = state }
        guard let last = lastDefinite, last != state else { return nil }
        return state == .connected ? .restored : .lost
    }
}
