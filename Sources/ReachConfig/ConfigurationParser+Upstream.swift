import ReachCore
import ReachSupport

extension ConfigurationParser {
    /// The `upstream` section: `check: resolver` (the default), `tcp://HOST:PORT` or `none`.
    mutating func parseUpstream(_ node: ConfigNode) -> UpstreamCheck? {
        guard let entries = reader.mapping(node, keys: ["check"]), let checkNode = entries["check"] else { return nil }
        let expected = "resolver, none, or tcp://HOST:PORT (like tcp://192.0.2.53:53)"
        guard let text = reader.string(checkNode, expected: expected) else { return nil }
        switch text {
        case "resolver": return .resolver
        case "none": return UpstreamCheck.none
        default:
            guard text.hasPrefix("tcp://"), case let (host, portText?) = HostPort.split(text.dropFirst(6)),
                !host.isEmpty,
                let port = Int(portText), (1...65535).contains(port)
            else {
                reader.report(
                    "expected \(expected) (IPv6 addresses in brackets: tcp://[2001:db8::53]:53), found \"\(text)\"",
                    at: checkNode
                )
                return nil
            }
            return .tcp(HostPort(host: String(host), port: port))
        }
    }
}
