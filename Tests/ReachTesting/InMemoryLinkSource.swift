import ReachCore
import Synchronization

/// A link source a test drives by hand: what it sends is what the monitor sees.
package final class InMemoryLinkSource: LinkSource {
    private struct State {
        var latest: LinkSnapshot?
        var report: (@Sendable (LinkSnapshot) -> Void)?
    }

    private let state = Mutex(State())

    package init(initial: LinkSnapshot? = nil) {
        state.withLock { $0.latest = initial }
    }

    package var isRunning: Bool { state.withLock { $0.report != nil } }

    package func send(_ snapshot: LinkSnapshot) {
        let report = state.withLock { state in
            state.latest = snapshot
            return state.report
        }
        report?(snapshot)
    }

    package func run(report: @escaping @Sendable (LinkSnapshot) -> Void) async throws {
        let latest = state.withLock { state in
            state.report = report
            return state.latest
        }
        if let latest { report(latest) }
        defer { state.withLock { $0.report = nil } }
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(3600))  // a link source runs until cancelled; nothing to wait for
        }
    }
}
