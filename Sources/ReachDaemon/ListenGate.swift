import ReachSupport
import ServiceLifecycle
import Synchronization

/// Holds back every service that acts or speaks (the monitor and its "reachd running", probes,
/// hooks, READY=1) until every listener is bound, so that an address reachd cannot listen on stops
/// it at start, before it has claimed to run.
///
/// The listeners bind inside the service group: Hummingbird binds in its `run()` and takes no
/// socket bound beforehand, so the bind itself is the check, and no second reachd can take the
/// port between a check and the bind.
final class ListenGate: Sendable {
    private let unbound: Mutex<Int>
    private let open = OneShotSignal()

    /// - Parameter listeners: How many listeners must report ``listenerIsBound()`` to open it.
    init(listeners: Int) {
        unbound = Mutex(listeners)
    }

    /// One listener is bound; the last one opens the gate.
    func listenerIsBound() {
        if unbound.withLock({
            $0 -= 1
            return $0 == 0
        }) {
            open.fire()
        }
    }

    /// Runs `service` once every listener is bound; returns without running it when the group
    /// stops first (a listener failed, or a graceful shutdown began).
    func holding(_ service: some Service) -> some Service {
        HeldService(open: open, service: service)
    }
}

/// A service that starts once its gate opens.
private struct HeldService<Held: Service>: Service {
    let open: OneShotSignal
    let service: Held

    func run() async throws {
        await cancelWhenGracefulShutdown { await open.wait() }
        guard open.hasFired, !Task.isCancelled else { return }
        try await service.run()
    }
}
