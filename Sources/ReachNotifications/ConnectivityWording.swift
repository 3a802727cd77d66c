import ReachAPI

/// What the desktop notification says, in words a person understands rather than reachd's codes.
///
/// No text here needs escaping for servers that read markup in the body: the sentences are fixed
/// and target names are letters, digits, `-`, `_` and `.` (the configuration refuses others).
enum ConnectivityWording {
    static let waitingSummary = "Waiting for connectivity…"
    static let connectedSummary = "Connected"
    /// From the Icon Naming Specification's status icons.
    static let connectedIcon = "network-transmit-receive"

    /// The waiting notification's body: why, and which target, such as
    /// "The server refused the connection (target server)."
    static func waitingBody(reason: String, target: String?) -> String {
        let sentence = ReasonWords.of(code: reason).sentence
        guard let target, !target.isEmpty else { return sentence + "." }
        return "\(sentence) (target \(target))."
    }

    /// `network-offline` when this machine has no usable link, `network-error` when the network is
    /// there but the server fails.
    static func waitingIcon(reason: String) -> String {
        ReasonWords.of(code: reason).isLinkReason ? "network-offline" : "network-error"
    }

    /// "The server can be reached again after 2 min 5 s."
    static func connectedBody(after outage: Duration?) -> String {
        guard let outage, outage >= .seconds(1) else { return "The server can be reached again." }
        return "The server can be reached again after \(spoken(outage))."
    }

    /// `45 s`, `2 min 5 s`, `1 h 3 min`.
    static func spoken(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds / 60) min \(seconds % 60) s" }
        let minutes = seconds % 3600 / 60
        return minutes == 0 ? "\(seconds / 3600) h" : "\(seconds / 3600) h \(minutes) min"
    }
}
