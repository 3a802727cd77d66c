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
    private struct State {
        var unbound: Int
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state: Mutex<State>

    /// - Parameter listeners: How many listeners must report ``listenerIsBound()`` to open it.
    init(listeners: Int) {
        state = Mutex(State(unbound: listeners))
    }

    /// One listener is bound; the last one opens the gate.
    func listenerIsBound() {
        let waiters = state.withLock { state in
            state.unbound -= 1
            guard state.unbound == 0 else { return [CheckedContinuation<Void, Never>]() }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    var isOpen: Bool { state.withLock { $0.unbound <= 0 } }

    /// Runs `service` once every listener is bound; returns without running it when the group
    /// stops first (a listener failed, or a graceful shutdown began).
    func holding(_ service: some Service) -> some Service {
        HeldService(gate: self, service: service)
    }

    /// Returns once the gate is open or the task is cancelled.
    func waitUntilOpen() async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Cancelled before this registration: the handler found no waiter, so resume now.
                let now = state.withLock { state in
                    guard state.unbound > 0, !Task.isCancelled else { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

/// A service that starts once its ``ListenGate`` opens.
private struct HeldService<Held: Service>: Service {
    let gate: ListenGate
    let service: Held

    func run() async throws {
        await cancelWhenGracefulShutdown { await gate.waitUntilOpen() }
        guard gate.isOpen, !Task.isCancelled else { return }
        try await service.run()
    }
}
