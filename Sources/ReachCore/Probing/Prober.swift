/// Probes one kind of target (HTTP, TCP, gRPC health) once.
///
/// Probers know nothing about schedules, hysteresis or policy: a scheduler calls them at each
/// target's cadence and hands the results to the monitor.
package protocol Prober: Sendable {
    /// Probes `target` once and reports how it went, within `target.timeout` measured from the call.
    ///
    /// Never throws: every failure, cancellation included, is a ``ProbeResult`` with a reason.
    func probe(_ target: ProbeTarget) async -> ProbeResult
}
