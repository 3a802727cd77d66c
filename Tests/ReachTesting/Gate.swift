import Synchronization

/// Holds tasks until a test opens it; waiting ignores cancellation, like the worst callback.
package final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var arrivals = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// How many times `wait()` has been called.
    package var arrivals: Int { state.withLock { $0.arrivals } }

    package func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                state.arrivals += 1
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    package func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Counts how many runs of something are under way at once, and the most ever seen.
package final class OverlapCounter: Sendable {
    private let counts = Mutex((current: 0, maximum: 0))

    package init() {}

    package var maximum: Int { counts.withLock { $0.maximum } }

    /// Runs `body`, counted as one run under way.
    package func during<T>(_ body: () async throws -> T) async rethrows -> T {
        counts.withLock { counts in
            counts.current += 1
            counts.maximum = max(counts.maximum, counts.current)
        }
        defer { counts.withLock { $0.current -= 1 } }
        return try await body()
    }
}
