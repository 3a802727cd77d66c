import Logging
import ReachCore
import ReachSupport

/// reachd's configuration, validated: every value here is usable as it stands.
public struct Configuration: Sendable, Equatable {
    /// In configuration order; the `server` shorthand, when present, comes first.
    public var targets: [ProbeTarget]
    public var policy: TargetPolicy
    public var interfaces: InterfaceFilter
    /// How long link gains and route churn settle before they count (losses count at once).
    public var linkSettleWindow: Duration
    /// Where the status endpoint listens.
    public var listen: HostPort
    /// The token clients of the status endpoint must send; required when ``listen`` is not loopback.
    public var apiToken: Secret?
    /// How long the status endpoint keeps a connection that sends nothing while no response is
    /// being written (an event stream is never idle).
    public var apiIdleTimeout: Duration
    /// A unix socket the status endpoint also listens on; off when `nil`.
    public var socket: String?
    /// TLS and basic auth on the status listener (``listen``), from an exporter-toolkit web
    /// configuration file; plain HTTP when `nil`.
    package var web: WebConfiguration?
    /// Where the `grpc.health.v1.Health` service listens; off when `nil`.
    public var grpcHealthListen: HostPort?
    public var log: LogSettings
    /// Hook directories and their timeouts (the `hooks` section).
    public var hooks = HookSettings()
    /// Where transitions are POSTed (the `webhooks` section).
    public var webhooks: [WebhookSettings] = []
    /// How reachd looks for a captive portal (the `captive_portal` section).
    public var captivePortal = CaptivePortalSettings()
    /// What reachd connects to, while targets fail, to tell the internet connection from the
    /// server (`upstream.check`).
    public var upstream = UpstreamCheck.resolver
    /// How long before a target's certificate expires the journal warns, once a day (`tls.warn_before`).
    public var certificateWarning = Duration.seconds(14 * 86_400)
    /// Where and how long reachd keeps its history (the `history` section). Off for a
    /// configuration built in code; the parser turns it on, as the shipped file documents.
    public var history = HistorySettings(enabled: false)
    /// Which paths are probed besides the routes' (`probe.per_interface`, and each family of a
    /// dual-stack name).
    public var variants = ProbeVariantSettings()

    public init(
        targets: [ProbeTarget],
        policy: TargetPolicy = .all,
        interfaces: InterfaceFilter = InterfaceFilter(),
        linkSettleWindow: Duration = .milliseconds(100),
        listen: HostPort = HostPort(host: "127.0.0.1", port: 9780),
        apiToken: Secret? = nil,
        apiIdleTimeout: Duration = .seconds(60),
        socket: String? = nil,
        grpcHealthListen: HostPort? = nil,
        log: LogSettings = LogSettings()
    ) {
        self.targets = targets
        self.policy = policy
        self.interfaces = interfaces
        self.linkSettleWindow = linkSettleWindow
        self.listen = listen
        self.apiToken = apiToken
        self.apiIdleTimeout = apiIdleTimeout
        self.socket = socket
        self.grpcHealthListen = grpcHealthListen
        self.log = log
    }

    /// What the probe scheduler probes: the targets, and the captive-portal check URL when one is set.
    public var probedTargets: [ProbeTarget] {
        targets + (captivePortal.check.map { [$0.target] } ?? [])
    }

    /// What the core's monitor takes from this configuration.
    public var monitor: ConnectivityMonitor.Configuration {
        var configuration = ConnectivityMonitor.Configuration(
            targets: targets,
            policy: policy,
            interfaceFilter: interfaces,
            linkSettleWindow: linkSettleWindow
        )
        configuration.portalCheck = captivePortal.check
        configuration.variants = variants
        return configuration
    }
}

/// Where log lines go and how much is said.
public struct LogSettings: Sendable, Equatable {
    public enum Target: String, Sendable, CaseIterable {
        /// One logfmt-style line per event on standard error.
        case stderr
        /// Structured entries in the systemd journal (`REACHD_*` fields, `MESSAGE_ID`s for `journalctl -x`).
        case journald
        /// The journal when standard error is the journal's stream or journald answers; else standard error.
        case auto
    }

    package var target: Target
    package var level: Logger.Level

    public init(target: Target = .auto, level: Logger.Level = .info) {
        self.target = target
        self.level = level
    }
}
