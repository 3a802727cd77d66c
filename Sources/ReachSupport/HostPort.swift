/// A host and port to connect to, or to listen on.
public struct HostPort: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// The host as an IP address, when it is written as one.
    package var literalAddress: IPAddress? { IPAddress(host) }

    /// Loopback needs no network link: `localhost`, 127.0.0.0/8 or ::1.
    package var isLoopback: Bool { Self.isLoopback(host) }

    /// Whether a server listening here must ask its clients for a bearer token: it must when other
    /// machines can reach it (anything but loopback), because the status tells which servers this
    /// machine talks to and when it is offline, and `POST /v1/check` makes it send probes. The one
    /// place this rule is decided: the configuration, the daemon and the status server ask it.
    package var listenerNeedsToken: Bool { !isLoopback }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether `host` names this machine's loopback: `localhost` (in any case), 127.0.0.0/8 or ::1.
    /// The one loopback check, for probe targets, listeners and `Host` headers alike.
    package static func isLoopback(_ host: some StringProtocol) -> Bool {
        host.lowercased() == "localhost" || IPAddress(String(host))?.isLoopback == true
    }

    /// Splits `host:port` or `[v6]:port` into the host (without brackets) and the text of the port;
    /// the port is `nil` when there is none (`host`, `[v6]`, or an IPv6 address without brackets).
    /// The text of the port is not checked: callers say what they accept.
    package static func split(_ text: Substring) -> (host: Substring, port: Substring?) {
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let rest = text[text.index(after: close)...]
            return (text[text.index(after: text.startIndex)..<close], rest.hasPrefix(":") ? rest.dropFirst() : nil)
        }
        if let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") {
            return (text[..<colon], text[text.index(after: colon)...])
        }
        return (text, nil)
    }
}
