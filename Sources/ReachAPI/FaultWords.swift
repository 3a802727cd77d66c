import ReachCore

/// The faults (``ReachCore/Fault``) in words a person on the phone with support understands: the
/// one table that the desktop notification and `reachctl status` read.
package enum FaultWords {
    /// "Your router is not answering.", "The internet connection is down.", "The server is not
    /// responding — your network is fine."; for link, dns and portal, whose reasons say it
    /// already, the short answer to "is it you or us?"; `nil` for a code this version does not know.
    package static func sentence(_ code: String) -> String? {
        switch Fault(rawValue: code) {
        case .gateway: "Your router is not answering."
        case .upstream: "The internet connection is down."
        case .server: "The server is not responding — your network is fine."
        case .link: "This machine has no usable network link."
        case .dns: "The server's name does not resolve."
        case .portal: "The network holds the connection until you sign in."
        case nil: nil
        }
    }

    /// Whether the notification's body leads with ``sentence(_:)``: only for the faults the reason
    /// alone cannot tell (the router, the internet connection, the server).
    package static func leadsTheReason(_ code: String) -> Bool {
        [Fault.gateway, .upstream, .server].contains { $0.code == code }
    }
}
