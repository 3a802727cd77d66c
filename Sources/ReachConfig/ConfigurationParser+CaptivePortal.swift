import FoundationEssentials
import ReachCore
import ReachSupport

extension ConfigurationParser {
    static let captivePortalKeys = [
        "check_url", "expect_status", "expect_body", "api_url", "networkd_state_dir", "ca_file", "warn_before",
    ]
    static let sessionWarningRange = Duration.zero...Duration.seconds(86_400)

    /// The `captive_portal` section. The check URL is probed with the targets' defaults (interval, timeout).
    mutating func parseCaptivePortal(_ node: ConfigNode, defaults: ProbeDefaults) -> CaptivePortalSettings? {
        guard let entries = reader.mapping(node, keys: Self.captivePortalKeys) else { return nil }
        var settings = CaptivePortalSettings()
        if let urlNode = entries["check_url"] {
            settings.check = parsePortalCheck(urlNode, entries: entries, defaults: defaults)
        } else {
            forbid(
                ["expect_status", "expect_body"],
                in: entries,
                because: "it describes the answer to check_url, which is not set"
            )
        }
        if let node = entries["api_url"],
            let url = reader.string(node, expected: "an https URL, like https://portal.example/captive")
        {
            if URLComponents(string: url)?.scheme?.lowercased() == "https",
                URLComponents(string: url)?.hostAsWritten?.isEmpty == false
            {
                settings.apiURL = url
            } else {
                reader.report(
                    "the captive-portal API is served over HTTPS (RFC 8908): expected a URL like https://portal.example/captive",
                    at: node
                )
            }
        }
        if let node = entries["networkd_state_dir"],
            let path = reader.string(node, expected: "a directory, like /run/systemd/netif/links")
        {
            if path.hasPrefix("/") {
                settings.networkdStateDirectory = path
            } else {
                reader.report("expected an absolute directory path, like /run/systemd/netif/links", at: node)
            }
        }
        if let node = entries["ca_file"] { settings.caFile = parseCAFile(node) }
        if let node = entries["warn_before"], let value = reader.duration(node, in: Self.sessionWarningRange) {
            settings.sessionWarning = value
        }
        return settings
    }

    private mutating func parsePortalCheck(
        _ urlNode: ConfigNode,
        entries: [String: ConfigNode],
        defaults: ProbeDefaults
    ) -> PortalCheck? {
        var expectation = HTTPExpectation()
        if let node = entries["expect_status"], let status = reader.integer(node, in: 100...599) {
            expectation.statuses = [status...status]
        }
        if let node = entries["expect_body"] {
            expectation.bodyContains = reader.string(node, expected: "text the check URL's answer contains")
        }
        if entries["expect_status"] == nil, entries["expect_body"] == nil {
            reader.report(
                "set expect_status (like 204) or expect_body: what only the open internet answers at check_url",
                at: urlNode
            )
        }
        guard let text = reader.string(urlNode, expected: "a URL like http://check.example/generate_204"),
            let check = httpCheck(url: text, node: urlNode, expectation: expectation)
        else { return nil }
        guard !check.isHTTPS else {
            // Behind a portal an HTTPS check only fails its handshake, which no-route or a broken proxy do too.
            reader.report(
                "use an http:// check URL: a portal can answer a plain-HTTP request in the server's place, which is what the check looks for",
                at: urlNode
            )
            return nil
        }
        return PortalCheck(
            target: ProbeTarget(
                name: PortalCheck.probeName,
                check: .http(check),
                interval: defaults.interval,
                timeout: defaults.timeout,
                addressFamily: defaults.addressFamily,
                coalescing: defaults.coalescing
            )
        )
    }
}
