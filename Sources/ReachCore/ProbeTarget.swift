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

/// A JSON scalar a health body is expected to hold at some pointer.
public enum JSONScalar: Sendable, Hashable, CustomStringConvertible {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    public var description: String {
        switch self {
        case .string(let value): "\"\(value)\""
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case .bool(let value): String(value)
        case .null: "null"
        }
    }
}

/// A JSON pointer (RFC 6901) into a health body and the scalar it must hold there.
public struct JSONExpectation: Sendable, Hashable {
    public var pointer: String
    public var equals: JSONScalar

    public init(pointer: String, equals: JSONScalar) {
        self.pointer = pointer
        self.equals = equals
    }
}

/// What an HTTP health answer must look like to count as healthy.
public struct HTTPExpectation: Sendable, Hashable {
    /// Accepted status codes; 200-299 by default.
    public var statuses: [ClosedRange<Int>]
    /// A substring the body must contain.
    public var bodyContains: String?
    /// A value the JSON body must hold, e.g. `/status` == `"ok"`.
    public var json: JSONExpectation?

    public init(statuses: [ClosedRange<Int>] = [200...299], bodyContains: String? = nil, json: JSONExpectation? = nil) {
        self.statuses = statuses
        self.bodyContains = bodyContains
        self.json = json
    }

    public func accepts(status: Int) -> Bool { statuses.contains { $0.contains(status) } }
}

/// A value that must never reach a log line, a metric or a status document, such as a bearer token.
///
/// Its description is `<redacted>`, so string interpolation cannot leak it by accident; the one
/// place that needs the value reads ``revealed``.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public let revealed: String

    public init(_ value: String) {
        self.revealed = value
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }

    /// Whether an `Authorization` value is `Bearer <this secret>` (the scheme in any case).
    ///
    /// The comparison takes the same time whatever the first differing byte, so response timing
    /// does not leak how much of a guess was right.
    public func isBearerCredential(_ authorization: String) -> Bool {
        let bytes = Array(authorization.utf8)
        let scheme = Array("bearer ".utf8)
        guard bytes.count > scheme.count else { return false }
        for index in scheme.indices {
            let expected = scheme[index]
            let isUpperCaseOfExpected = expected >= UInt8(ascii: "a") && bytes[index] == expected - 0x20
            guard bytes[index] == expected || isUpperCaseOfExpected else { return false }
        }
        let presented = bytes[scheme.count...]
        let expected = Array(revealed.utf8)
        var difference = UInt8(truncatingIfNeeded: presented.count ^ expected.count)
        if presented.count != expected.count { difference |= 1 }
        for (offset, byte) in presented.enumerated() {
            difference |= byte ^ (expected.isEmpty ? 0 : expected[offset % expected.count])
        }
        return difference == 0
    }
}

/// How a probe verifies the server's certificate.
public struct TLSSettings: Sendable, Hashable {
    /// A PEM bundle of extra trusted CAs (a private CA, a self-signed server); `nil` trusts the system store.
    public var caFile: String?
    /// The name sent in SNI and checked against the certificate, when it differs from the URL's host.
    public var serverName: String?

    public init(caFile: String? = nil, serverName: String? = nil) {
        self.caFile = caFile
        self.serverName = serverName
    }
}

extension String {
    /// Whether this has a character no HTTP header value may carry (a C0 control other than tab,
    /// or DEL): a token or header value with one is refused where it is read, never sent.
    public var hasHeaderControlCharacter: Bool {
        unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
    }
}

/// A request header a health endpoint needs, e.g. `X-Api-Key`.
public struct HTTPHeaderField: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A GET against an HTTP(S) health endpoint.
public struct HTTPCheck: Sendable, Hashable {
    /// The full URL, e.g. `https://api.example.com/api/v1/health`.
    public var url: String
    /// The URL's host and port (default port filled in), for the link rule and logs.
    public var endpoint: HostPort
    public var expectation: HTTPExpectation
    public var headers: [HTTPHeaderField]
    /// Sent as `Authorization: Bearer ...`; read from a file or a systemd credential at load time.
    public var bearerToken: Secret?
    public var tls: TLSSettings

    public init(
        url: String, endpoint: HostPort, expectation: HTTPExpectation = HTTPExpectation(),
        headers: [HTTPHeaderField] = [], bearerToken: Secret? = nil, tls: TLSSettings = TLSSettings()
    ) {
        self.url = url
        self.endpoint = endpoint
        self.expectation = expectation
        self.headers = headers
        self.bearerToken = bearerToken
        self.tls = tls
    }

    public var isHTTPS: Bool { url.lowercased().hasPrefix("https:") }
}

/// A `grpc.health.v1.Health/Check` call.
public struct GRPCHealthCheck: Sendable, Hashable {
    public var endpoint: HostPort
    /// The service name to ask about; empty means the server as a whole.
    public var service: String
    /// Also hold a `Health/Watch` stream open, so the server's own status changes and a broken
    /// connection are noticed in milliseconds rather than at the next tick.
    public var watch: Bool

    public init(endpoint: HostPort, service: String = "", watch: Bool = false) {
        self.endpoint = endpoint
        self.service = service
        self.watch = watch
    }
}

/// Which IP family a probe may connect over.
public enum AddressFamily: String, Sendable, Hashable, CaseIterable {
    /// Both, whichever answers first (Happy Eyeballs). The default: right on IPv4-only,
    /// IPv6-only and dual-stack hosts alike.
    case auto
    case ipv4
    case ipv6
}

/// Per-target damping: how many consecutive results it takes to change the target's health.
///
/// The defaults (1 and 1) keep the one-second semantics: one failed probe marks a healthy target
/// down. Raise them for Kubernetes/ConnMan-style damping of a flaky path.
public struct Hysteresis: Sendable, Hashable {
    public var failuresBeforeDown: Int
    public var successesBeforeUp: Int

    public init(failuresBeforeDown: Int = 1, successesBeforeUp: Int = 1) {
        self.failuresBeforeDown = failuresBeforeDown
        self.successesBeforeUp = successesBeforeUp
    }
}

/// One thing reachd probes, with its own cadence, deadline and damping.
public struct ProbeTarget: Sendable, Hashable, Identifiable {
    public enum Check: Sendable, Hashable {
        case http(HTTPCheck)
        case tcp(HostPort)
        case grpc(GRPCHealthCheck)
    }

    /// Unique among targets; the key in status output, metrics and gRPC health service names.
    public var name: String
    public var check: Check
    public var interval: Duration
    /// The hard deadline for one probe, start to finish.
    public var timeout: Duration
    public var hysteresis: Hysteresis
    public var addressFamily: AddressFamily
    /// The window within which the ticks of different targets share one wake-up: the target's
    /// phase on its grid is rounded down to a multiple of it (of at most a twentieth of the
    /// interval, and narrower when over 10 targets would share one). Zero gives every target a
    /// phase of its own.
    ///
    /// Waking once per probe costs more than the probe: at 100 targets a second, each wake-up
    /// found the daemon's code and data cold again. The cadence of every target stays exact;
    /// only where in the interval its ticks fall moves, by less than the window.
    public var coalescing: Duration

    /// The default ``coalescing``: at a one-second interval, at most 20 wake-ups a second for
    /// ticks however many targets there are.
    public static let defaultCoalescing = Duration.milliseconds(50)

    public init(
        name: String, check: Check, interval: Duration = .seconds(1), timeout: Duration = .seconds(2),
        hysteresis: Hysteresis = Hysteresis(), addressFamily: AddressFamily = .auto, coalescing: Duration = defaultCoalescing
    ) {
        self.name = name
        self.check = check
        self.interval = interval
        self.timeout = timeout
        self.hysteresis = hysteresis
        self.addressFamily = addressFamily
        self.coalescing = coalescing
    }

    public var id: String { name }

    /// `http`, `tcp` or `grpc`.
    public var kind: String {
        switch check {
        case .http: "http"
        case .tcp: "tcp"
        case .grpc: "grpc"
        }
    }

    public var endpoint: HostPort {
        switch check {
        case .http(let http): http.endpoint
        case .tcp(let endpoint): endpoint
        case .grpc(let grpc): grpc.endpoint
        }
    }
}

/// How the targets' health combines into one answer.
public enum TargetPolicy: Sendable, Hashable, CustomStringConvertible {
    /// Every target must be healthy.
    case all
    /// One healthy target is enough.
    case any
    /// At least this many targets must be healthy.
    case quorum(Int)

    public var description: String {
        switch self {
        case .all: "all"
        case .any: "any"
        case .quorum(let k): "quorum(\(k))"
        }
    }
}
