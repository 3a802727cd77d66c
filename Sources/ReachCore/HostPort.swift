/// A host and port to connect to.
public struct HostPort: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// The host as an IP address, when it is written as one.
    public var literalAddress: IPAddress? { IPAddress(host) }

    /// Loopback needs no network link: `localhost`, 127.0.0.0/8 or ::1.
    public var isLoopback: Bool {
        host.lowercased() == "localhost" || literalAddress?.isLoopback == true
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
