import ReachSupport

/// One thing reachd probes, with its own cadence, deadline and damping.
public struct ProbeTarget: Sendable, Hashable, Identifiable {
    package enum Check: Sendable, Hashable {
        case http(HTTPCheck)
        case tcp(HostPort)
        case grpc(GRPCHealthCheck)
        case dns(DNSCheck)
        case icmp(ICMPCheck)
    }

    /// Unique among targets; the key in status output, metrics and gRPC health service names.
    package var name: String
    package var check: Check
    package var interval: Duration
    /// The hard deadline for one probe, start to finish.
    package var timeout: Duration
    package var hysteresis: Hysteresis
    package var addressFamily: AddressFamily
    /// The window within which the ticks of different targets share one wake-up: the target's
    /// phase on its grid is rounded down to a multiple of it (of at most a twentieth of the
    /// interval, and narrower when over 10 targets would share one). Zero gives every target a
    /// phase of its own.
    ///
    /// Waking once per probe costs more than the probe: at 100 targets a second, each wake-up
    /// found the daemon's code and data cold again. The cadence of every target stays exact;
    /// only where in the interval its ticks fall moves, by less than the window.
    package var coalescing: Duration
    /// Set on a variant of a configured target that probes one path only (one uplink, one address
    /// family); `nil` on the configured targets themselves, which follow the system's routes.
    package var variant: ProbeVariant?
    /// How well the target must answer while it is up (``QualityBudget``); `nil`: it has no quality.
    package var quality: QualityBudget?

    /// The default ``coalescing``: at a one-second interval, at most 20 wake-ups a second for
    /// ticks however many targets there are.
    package static let defaultCoalescing = Duration.milliseconds(50)

    package init(
        name: String,
        check: Check,
        interval: Duration = .seconds(1),
        timeout: Duration = .seconds(2),
        hysteresis: Hysteresis = Hysteresis(),
        addressFamily: AddressFamily = .auto,
        coalescing: Duration = defaultCoalescing,
        variant: ProbeVariant? = nil,
        quality: QualityBudget? = nil
    ) {
        self.quality = quality
        self.variant = variant
        self.name = name
        self.check = check
        self.interval = interval
        self.timeout = timeout
        self.hysteresis = hysteresis
        self.addressFamily = addressFamily
        self.coalescing = coalescing
    }

    public var id: String { name }

    /// Whether `other` is this target but for its quality budget: a reload that changes only the
    /// budget keeps the target's health (quality never moves the verdict).
    package func judgedAlike(_ other: ProbeTarget) -> Bool {
        var same = self
        same.quality = other.quality
        return same == other
    }

    /// `http`, `tcp`, `grpc`, `dns` or `icmp`.
    package var kind: String {
        switch check {
        case .http: "http"
        case .tcp: "tcp"
        case .grpc: "grpc"
        case .dns: "dns"
        case .icmp: "icmp"
        }
    }

    package var endpoint: HostPort {
        switch check {
        case .http(let http): http.endpoint
        case .tcp(let endpoint): endpoint
        case .grpc(let grpc): grpc.endpoint
        case .dns(let dns): dns.endpoint
        case .icmp(let icmp): HostPort(host: icmp.host, port: 0)
        }
    }

    /// Whether its probes speak TLS, and so see a certificate: `https` URLs and gRPC with `tls`.
    package var usesTLS: Bool {
        switch check {
        case .http(let http): http.isHTTPS
        case .tcp, .dns, .icmp: false
        case .grpc(let grpc): grpc.tls != nil
        }
    }
}
