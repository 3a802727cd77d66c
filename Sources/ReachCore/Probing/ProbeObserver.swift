/// Sees every probe the scheduler starts, skips and finishes: the hook for metrics and benchmarks.
///
/// Every started probe ends in exactly one of ``probeFinished(_:result:)`` (its result was applied)
/// and ``probeSuperseded(_:result:)`` (it was dropped as older than one applied).
///
/// Calls arrive where the scheduler runs (in the daemon, the event loop its probes run on) and
/// must return quickly, without blocking; every method has an empty default.
package protocol ProbeObserver: Sendable {
    /// A probe of `target` started `lateness` after its scheduled tick (zero for immediate probes).
    func probeStarted(_ target: ProbeTarget, lateness: Duration)
    /// A tick of `target` found as many of its probes in flight as may overlap
    /// (``ProbeScheduler/maximumOverlap(interval:timeout:)``), so no probe started.
    func probeSkipped(_ target: ProbeTarget)
    /// A probe of `target` finished and its result went to the monitor, or a watch stream pushed
    /// a result.
    func probeFinished(_ target: ProbeTarget, result: ProbeResult)
    /// A probe of `target` finished after a probe that started later had already been applied,
    /// so its result was dropped: it would have overridden newer evidence (a late timeout after a
    /// success). The probe still ran, so its duration and outcome may be counted, but it is not
    /// the target's latest result.
    func probeSuperseded(_ target: ProbeTarget, result: ProbeResult)
}

extension ProbeObserver {
    package func probeStarted(_ target: ProbeTarget, lateness: Duration) {}
    package func probeSkipped(_ target: ProbeTarget) {}
    package func probeFinished(_ target: ProbeTarget, result: ProbeResult) {}
    package func probeSuperseded(_ target: ProbeTarget, result: ProbeResult) {}
}

/// A prober that can also hold a stream open and report results as the server pushes them
/// (gRPC `Health/Watch`).
package protocol WatchingProber: Prober {
    /// Whether `target` asks to be watched as well as polled.
    func watches(_ target: ProbeTarget) -> Bool
    /// Reports every pushed result until the calling task is cancelled.
    ///
    /// Each result goes with the ``ProbeEpoch`` that `epoch` gave when its observation began (the
    /// stream opened, a Check started), not when it arrived: a result that began before a link
    /// change is then dropped, as a polled one is, and cannot vouch for the new link.
    func watch(
        _ target: ProbeTarget,
        epoch: @escaping @Sendable () -> ProbeEpoch,
        report: @escaping @Sendable (ProbeResult, ProbeEpoch) -> Void
    ) async
}
