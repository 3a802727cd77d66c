import ReachCore
import ReachSupport

/// The verdict in one short line for people: systemd's `STATUS=` (what `systemctl status reachd`
/// shows), and anything else that has a single line to fill.
extension Verdict {
    /// `connected via eth0: server 12 ms` / `waiting for connectivity: server refused`.
    package var summary: String {
        switch state {
        case .connected:
            let via = usableInterfaces.isEmpty ? "" : " via \(usableInterfaces.joined(separator: ", "))"
            let latencies = targets.prefix(3).compactMap { target in
                target.lastResult.map { "\(target.name) \(Int(($0.latency.milliseconds).rounded())) ms" }
            }
            let more = targets.count > 3 ? ", +\(targets.count - 3) more" : ""
            return "connected\(via)" + (latencies.isEmpty ? "" : ": \(latencies.joined(separator: ", "))\(more)")
        case .disconnected:
            return "waiting for connectivity: \(reason.phrase)"
        case .unknown:
            return "starting: \(reason.phrase)"
        }
    }
}

extension VerdictReason {
    /// A few words a person reads at a glance: `no link`, `server refused`, `api HTTP 503`.
    package var phrase: String {
        if case .targetFailed(let target, let failure) = self { return "\(target) \(failure.words.phrase)" }
        return words.phrase
    }
}
