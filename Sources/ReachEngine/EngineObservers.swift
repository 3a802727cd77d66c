import ReachCore
import Synchronization

/// What else sees the engine's probes and link snapshots besides the engine itself: a daemon's
/// metrics and history. They are added once the engine has made its monitor (history follows it)
/// and before it runs (``ConnectivityEngine/observe(probes:links:)``); each probe scheduler and the
/// link service take the list when they start.
final class EngineObservers: Sendable {
    private let state = Mutex<(probes: [any ProbeObserver], links: [@Sendable (LinkSnapshot) -> Void])>(([], []))

    func add(probes: [any ProbeObserver], links: (@Sendable (LinkSnapshot) -> Void)?) {
        state.withLock { state in
            state.probes += probes
            if let links { state.links.append(links) }
        }
    }

    var probes: [any ProbeObserver] { state.withLock { $0.probes } }

    /// One call that hands a snapshot to every link observer, as the list is now.
    var links: @Sendable (LinkSnapshot) -> Void {
        let observers = state.withLock { $0.links }
        return { snapshot in
            for observe in observers { observe(snapshot) }
        }
    }
}
