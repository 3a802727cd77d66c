import FoundationEssentials
import ReachPOSIX
import ReachSupport

/// The captive-portal API URIs systemd-networkd learned from the network (RFC 8910: DHCPv4 option
/// 114, DHCPv6 option 103, a router advertisement), read from its per-link state files.
///
/// networkd writes one file per interface index under `/run/systemd/netif/links`, each a list of
/// `KEY=value` lines; the API's URI is the `CAPTIVE_PORTAL=` line. The files are networkd's, not a
/// documented interface, so anything unexpected in them is skipped, never an error.
package enum NetworkdLinkState {
    /// What a network advertises instead of an API when it has no captive portal (RFC 8910).
    package static let unrestricted = "urn:ietf:params:capport:unrestricted"

    /// The largest state file read; networkd's are a few hundred bytes.
    static let fileLimit = 64 << 10

    /// Each interface index whose state file in `directory` names a captive-portal API, and that
    /// URI (or ``unrestricted``).
    package static func captivePortalAPIs(in directory: String) -> [Int32: String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [:] }
        var apis: [Int32: String] = [:]
        for name in names {
            guard let index = Int32(name), index > 0,
                let text = try? BoundedFile.readText(directory + "/" + name, limit: fileLimit).get(),
                let uri = captivePortalAPI(inState: text)
            else { continue }
            apis[index] = uri
        }
        return apis
    }

    /// The `CAPTIVE_PORTAL=` value of one state file's text, if it is an https URI or ``unrestricted``.
    /// Package-visible for the fuzz targets (`FuzzTesting`), which feed it any bytes.
    package static func captivePortalAPI(inState text: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("CAPTIVE_PORTAL=") {
            let value = line.dropFirst("CAPTIVE_PORTAL=".count).trimmingWhitespace
            // RFC 8908 serves the API over HTTPS only; anything else is not an API to ask.
            if value.lowercased().hasPrefix("https://") || value == unrestricted { return value }
        }
        return nil
    }
}
