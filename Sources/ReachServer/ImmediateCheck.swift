import ReachCore

/// `POST /v1/check`: probe every target now and answer with the fresh verdict, so that a person who
/// just plugged in a cable, or a script about to upload, need not wait for the next tick.
///
/// It asks the monitor for an immediate probe, then watches the verdict until every target has a
/// result newer than the request, the verdict changes, or `waitLimit` passes — whichever comes
/// first — and answers with what the monitor knows then. While probing is suspended (no usable
/// link, system asleep) no probe will come, so it answers at once.
///
/// It polls: check times are deliberately not events (they change every probe), and a read of
/// the current verdict is a lock and a copy.
struct ImmediateCheck: Sendable {
    let monitor: ConnectivityMonitor
    let waitLimit: Duration
    var pollInterval: Duration = .milliseconds(10)

    func run() async -> ConnectivityEvent {
        let before = monitor.current
        monitor.requestImmediateProbe()
        let deadline = ContinuousClock.now.advanced(by: waitLimit)
        while true {
            let now = monitor.current
            if isSettled(before: before, now: now) || ContinuousClock.now >= deadline {
                return now
            }
            guard (try? await Task.sleep(for: pollInterval)) != nil else { return monitor.current }
        }
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
