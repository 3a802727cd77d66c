import ReachCore

/// Hands every probe event to each observer in turn: the metrics, then the certificate warnings.
struct ProbeObservers: ProbeObserver {
    let observers: [any ProbeObserver]

    func probeStarted(_ target: ProbeTarget, lateness: Duration) {
        for observer in observers { observer.probeStarted(target, lateness: lateness) }
    }

    func probeSkipped(_ target: ProbeTarget) {
        for observer in observers { observer.probeSkipped(target) }
    }

    func probeFinished(_ target: ProbeTarget, result: ProbeResult) {
        for observer in observers { observer.probeFinished(target, result: result) }
    }

    func probeSuperseded(_ target: ProbeTarget, result: ProbeResult) {
        for observer in observers { observer.probeSuperseded(target, result: result) }
    }
}
