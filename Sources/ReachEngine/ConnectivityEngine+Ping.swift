import Logging
import ReachCore
import ReachProbes
import ReachSupport

extension ConnectivityEngine {
    /// What this machine does not allow of `targets`' probes, a sentence each naming what to
    /// change: ICMP echo for `icmp` targets where `net.ipv4.ping_group_range` leaves this process's
    /// group out (``ReachProbes/PingPermission``). Empty when all is allowed. Start-up, reloads and
    /// `reachd --check-config` say these.
    package static func hostProblems(for targets: [ProbeTarget]) -> [String] {
        let icmp = targets.filter { if case .icmp = $0.check { true } else { false } }
        guard !icmp.isEmpty else { return [] }
        let names = icmp.prefix(3).map(\.name).joined(separator: ", ") + (icmp.count > 3 ? ", …" : "")
        let families: [IPFamily] =
            icmp.contains { target in
                if case .icmp(let check) = target.check { IPAddress(check.host)?.family == .ipv6 } else { false }
            } ? [.ipv4, .ipv6] : [.ipv4]
        // The sysctl governs both families: the first refusal says it.
        guard let problem = families.lazy.compactMap(PingPermission.problem).first else { return [] }
        return ["icmp target\(icmp.count == 1 ? "" : "s") \(names): \(problem)"]
    }

    /// Logs ``hostProblems(for:)`` as warnings, once each time a target list is applied.
    static func sayHostProblems(_ targets: [ProbeTarget], logger: Logger) {
        for problem in hostProblems(for: targets) { logger.warning("\(problem)") }
    }
}
