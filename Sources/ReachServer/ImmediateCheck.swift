import ReachCore

/// `POST /v1/check`: probe every target now and answer with the fresh verdict, so that a person who
/// just plugged in a cable, or a script about to upload, need not wait for the next tick.
///
/// It asks the monitor for an immediate probe, then looks again at each of the monitor's updates
/// until every target has a result newer than the request, the verdict changes, or `waitLimit`
/// passes — whichever comes first — and answers with what the monitor knows then. While probing is
/// suspended (no usable link, system asleep) no probe will come, so it answers at once.
///
/// It follows ``ReachCore/ConnectivityMonitor/updates()``, not the event stream: check times are
/// deliberately not events (they change every probe).
struct ImmediateCheck: Sendable {
    let monitor: ConnectivityMonitor
    let waitLimit: Duration

    func run() async -> ConnectivityEvent {
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
        let checkedBefore = Dictionary(before.verdict.targets.map { ($0.name, $0.lastCheckedAt) }, uniquingKeysWith: { first, _ in first })
        return now.verdict.targets.allSatisfy { target in
            guard let checked = target.lastCheckedAt else { return false }
            guard let previous = checkedBefore[target.name] ?? nil else { return true }
            // Any other check time is a new result; comparing for "later" would hang on a clock step back.
            return checked != previous
        }
    }
}
