import ReachAPI

extension Summary {
    /// Each uplink probed on its own (`probe.per_interface`), and the families some target answers
    /// over only in part; nothing when there are none.
    static func pathLines(_ document: StatusDocument) -> [String] {
        var lines: [String] = []
        if !document.interfaces.isEmpty {
            lines.append("uplinks:    (each probed on its own; the verdict follows the routes)")
            let nameWidth = document.interfaces.map(\.name.count).max() ?? 0
            for uplink in document.interfaces {
                var line = "  " + uplink.name + String(repeating: " ", count: nameWidth - uplink.name.count) + "  "
                switch uplink.reachable {
                case true?: line += "reachable" + (uplink.latencySeconds.map { "    " + milliseconds($0) } ?? "")
                case false?:
                    line += "unreachable  " + (uplink.reason ?? "") + (uplink.fault.map { " (fault: \($0))" } ?? "")
                case nil: line += "unknown"
                }
                lines.append(line)
            }
        }
        if !document.degradedFamilies.isEmpty {
            let degraded = document.degradedFamilies.joined(separator: ", ")
            lines.append("families:   \(degraded) degraded: some targets answer only over the other family")
        }
        return lines
    }
}
