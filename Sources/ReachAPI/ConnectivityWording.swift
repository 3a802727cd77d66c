import ReachCore
import ReachSupport

/// What reachd tells a person about connectivity, in words a person understands rather than its
/// codes: the one table that the desktop notification (`reachctl notify-agent`) and a program's
/// own banner (ReachKit's `ServiceVerdict.message`) read, so that both say the same.
///
/// No text here needs escaping for servers that read markup in the body: the sentences are fixed
/// and target names are letters, digits, `-`, `_` and `.` (the configuration refuses others).
package enum ConnectivityWording {
    package static let waitingSummary = "Waiting for connectivity…"
    package static let connectedSummary = "Connected"
    /// From the Icon Naming Specification's status icons.
    package static let connectedIcon = "network-transmit-receive"
    package static let checkNowLabel = "Check now"
    package static let signInSummary = "Sign in to the network"
    package static let openSignInLabel = "Open sign-in page"
    /// A login: the specification's status icon for a password prompt.
    package static let signInIcon = "dialog-password"
    /// The specification's status icon for "an appointment starts soon".
    package static let sessionEndingIcon = "appointment-soon"
    package static let unknownVenue = "this network's login page"
    /// The quality notification's title: connected, but slow or lossy.
    package static let slowSummary = "Your connection is slow"
    /// The specification's status icon for a weak signal.
    package static let slowIcon = "network-wireless-signal-weak"

    /// "Still connected, but your router answers slowly and loses packets.": where the quality
    /// says it is slow (`gateway`, `link`, else the server and its target) and how (the measures
    /// past their budget), without the measured values, which change with every probe.
    package static func slowBody(fault: String?, target: String?, measures: [String]) -> String {
        let place =
            switch fault {
            case Fault.gateway.code: "your router"
            case Fault.link.code: "your Wi-Fi or mobile link"
            default: target.map { "the server (target \($0))" } ?? "the server"
            }
        var how = measures.compactMap { measure -> String? in
            switch QualityMeasure(rawValue: measure) {
            case .latency: "answers slowly"
            case .loss: "loses packets"
            case .jitter: "answers unsteadily"
            case nil: nil
            }
        }
        if how.isEmpty { how = ["answers poorly"] }
        return "Still connected, but \(place) \(how.joined(separator: " and "))."
    }

    /// The waiting notification's body: whose fault it is, when the path evidence says, then why
    /// and which target, such as "The internet connection is down. The server did not answer in
    /// time (target server)." The title stays "Waiting for connectivity…" whatever the fault: a
    /// person need not tell "no internet" from "server down" to know they must wait.
    package static func waitingBody(reason: String, target: String?, fault: String? = nil) -> String {
        let sentence = ReasonWords.of(code: reason).sentence
        let why = target.map { $0.isEmpty ? sentence + "." : "\(sentence) (target \($0))." } ?? sentence + "."
        guard let fault, FaultWords.leadsTheReason(fault), let lead = FaultWords.sentence(fault) else { return why }
        return "\(lead) \(why)"
    }

    /// `network-offline` when this machine has no usable link, `network-error` when the network is
    /// there but the server fails.
    package static func waitingIcon(reason: String) -> String {
        ReasonWords.of(code: reason).isLinkReason ? "network-offline" : "network-error"
    }

    /// "The server can be reached again after 2 min 5 s."
    package static func connectedBody(after outage: Duration?) -> String {
        guard let outage, outage >= .seconds(1) else { return "The server can be reached again." }
        return "The server can be reached again after \(spoken(outage))."
    }

    /// "Sign in at hotel.example to reach the server.", or at "this network's login page" when
    /// the venue is unknown.
    package static func signInBody(venue: String?) -> String {
        "Sign in at \(venue ?? unknownVenue) to reach the server."
    }

    /// "Wi-Fi session ends in 5 minutes": Wi-Fi when the portal's interface is a wireless one
    /// (`wl…`, as systemd and the kernel name them), "Network" otherwise.
    package static func sessionEndingSummary(remaining: Duration, interface: String?) -> String {
        let medium = interface?.hasPrefix("wl") == true ? "Wi-Fi" : "Network"
        return "\(medium) session ends in \(spokenMinutes(remaining))"
    }

    /// "Sign in again at hotel.example to stay connected."
    package static func sessionEndingBody(venue: String?) -> String {
        "Sign in again at \(venue ?? unknownVenue) to stay connected."
    }

    /// The host a person knows the venue by: the venue page's, else the sign-in page's. Only a
    /// plain host name or address: the network chooses these strings, and a server that reads
    /// markup must not be handed any.
    package static func venue(venueInfoURL: String?, userPortalURL: String?) -> String? {
        for url in [venueInfoURL, userPortalURL] {
            guard let url, let host = HTTPURL(url)?.host,
                host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:".contains($0)) })
            else { continue }
            return host
        }
        return nil
    }

    /// `less than a minute`, `1 minute`, `5 minutes` (the nearest), `1 h 5 min` from an hour on.
    package static func spokenMinutes(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        if seconds < 60 { return "less than a minute" }
        let minutes = (seconds + 30) / 60
        if minutes >= 60 { return spoken(.seconds(minutes * 60)) }
        return minutes == 1 ? "1 minute" : "\(minutes) minutes"
    }

    /// `45 s`, `2 min 5 s`, `1 h 3 min`.
    package static func spoken(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds / 60) min \(seconds % 60) s" }
        let minutes = seconds % 3600 / 60
        return minutes == 0 ? "\(seconds / 3600) h" : "\(seconds / 3600) h \(minutes) min"
    }
}
