import ReachCore

extension StatusDocument {
    /// The verdict in one line, as `reachctl status` and the desktop agent's log print it:
    /// `connected (healthy)`, `disconnected: connection_refused (target server)`, `unknown: starting`.
    package var headline: String {
        if state == ConnectivityState.connected.rawValue {
            return qualityPhrase.map { "connected, \($0)" } ?? "connected (\(reason))"
        }
        var line = "\(state): \(reason)"
        if let target { line += " (target \(target))" }
        return line
    }
}
