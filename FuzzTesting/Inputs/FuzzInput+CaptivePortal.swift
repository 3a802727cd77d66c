import ReachCaptivePortal
import ReachCore

extension FuzzInput {
    /// What the network says about its captive portal: the RFC 8908 API's JSON (any server on
    /// the network answers it) and systemd-networkd's per-link state file, where the RFC 8910 URI
    /// the network advertised lands as `CAPTIVE_PORTAL=`.
    ///
    /// The same bytes go to both. A URI read from a state file is https or the "unrestricted"
    /// URN; the API's URLs are openable https/http URLs and its counts non-negative.
    package static func captivePortal(_ bytes: [UInt8]) {
        if let answer = CaptivePortalAPIDocument.parse(bytes) {
            for url in [answer.userPortalURL, answer.venueInfoURL].compactMap(\.self) {
                let lowered = url.lowercased()
                require(
                    lowered.hasPrefix("https://") || lowered.hasPrefix("http://"),
                    "an API URL that is not http(s): \(url)"
                )
            }
            require((answer.secondsRemaining ?? 0) >= 0 && (answer.bytesRemaining ?? 0) >= 0, "a negative count")
        }
        if let uri = NetworkdLinkState.captivePortalAPI(inState: text(bytes)) {
            require(
                uri.lowercased().hasPrefix("https://") || uri == NetworkdLinkState.unrestricted,
                "a state-file URI that is not https: \(uri)"
            )
            require(!uri.contains("\n"), "a state-file URI spanning lines")
        }
    }
}
