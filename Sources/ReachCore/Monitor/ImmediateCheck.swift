import ReachSupport

/// Probes every target now and answers with the fresh verdict: `POST /v1/check` (a person who
/// just plugged in a cable, or a script about to upload, need not wait for the next tick), and an
/// embedding program's `checkNow()`, alike.
///
/// It asks the monitor for an immediate probe, then looks again at each of the monitor's updates
/// until every target has a result newer than the request, the verdict changes, or `waitLimit`
/// passes — whichever comes first — and answers with what the monitor knows then. While probing is
/// suspended (no usable link, system asleep) no probe will come, so it answers at once.
///
/// It follows ``ConnectivityMonitor/updates()``, not the event stream: check times are
/// deliberately not events (they change every probe).
package struct ImmediateCheck: Sendable {
    let monitor: ConnectivityMonitor
    let waitLimit: Duration

    /// A check of `monitor`'s targets that waits at most `waitLimit` (see ``waitLimit(for:)``).
    package init(monitor: ConnectivityMonitor, waitLimit: Duration) {
        self.monitor = monitor
        self.waitLimit = waitLimit
    }

    /// How long a check should wait for `targets`: the longest probe timeout plus a second for
    /// scheduling and delivery; 3 s when there are no targets. Never more than ``longestWait``.
    package static func waitLimit(for targets: [ProbeTarget]) -> Duration {
        guard let longest = targets.map(\.timeout).max() else { return .seconds(3) }
        return min(longest + .seconds(1), longestWait)
    }

    /// The longest a check waits; it then answers with the results it has. Clients give up on an
    /// answer that takes longer (reachctl after 45 s).
    package static let longestWait: Duration = .seconds(30)

    /// Asks for the probes and waits as above; returns the verdict then.
    package func run() async -> ConnectivityEvent {
        let before = monitor.current
        // Subscribed before asking, so that no result can come in between unseen.
        let updates = monitor.updates()
        monitor.requestImmediateProbe()
        let settled = try? await withDeadline(waitLimit) {
            // The first update is the state as it is now: suspended probing answers at once.
            for await _ in updates {
                let now = monitor.current
                if isSettled(before: before, now: now) { return now }
            }
            return monitor.current
        }
        return settled ?? monitor.current
    }

    private func isSettled(before: ConnectivityEvent, now: ConnectivityEvent) -> Bool {
        if now.sequence != before.sequence || monitor.currentProbeControl.isSuspended { return true }
        let checkedBefore = Dictionary(
            before.verdict.targets.map { ($0.name, $0.lastCheckedAt) },
            uniquingKeysWith: { first, _ in first }
        )
        return now.verdict.targets.allSatisfy { target in
            guard let checked = target.lastCheckedAt else { return false }
            guard let previous = checkedBefore[target.name] ?? nil else { return true }
            // Any other check time is a new result; comparing for "later" would hang on a clock step back.
            return checked != previous
        }
    }
}
