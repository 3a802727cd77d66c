import ReachCore
import ReachSupport

/// What the engine needs to tell connectivity, validated: every value here is usable as it stands.
/// reachd's configuration file gives it (with what only the daemon serves: `DaemonConfiguration`),
/// and a program embedding the engine gives it in code or from the same file.
public struct Configuration: Sendable, Equatable {
    /// In configuration order; the `server` shorthand, when present, comes first.
    public var targets: [ProbeTarget]
    public var policy: TargetPolicy
    public var interfaces: InterfaceFilter
    /// How long link gains and route churn settle before they count (losses count at once).
    public var linkSettleWindow: Duration
    /// How the engine looks for a captive portal (the `captive_portal` section).
    public var captivePortal = CaptivePortalSettings()
    /// What the engine connects to, while targets fail, to tell the internet connection from the
    /// server (`upstream.check`).
    public var upstream = UpstreamCheck.resolver
    /// How long before a target's certificate expires the journal warns, once a day (`tls.warn_before`).
    public var certificateWarning = Duration.seconds(14 * 86_400)
    /// Which paths are probed besides the routes' (`probe.per_interface`, and each family of a
    /// dual-stack name).
    public var variants = ProbeVariantSettings()

    public init(
        targets: [ProbeTarget],
        policy: TargetPolicy = .all,
        interfaces: InterfaceFilter = InterfaceFilter(),
        linkSettleWindow: Duration = .milliseconds(100)
    ) {
        self.targets = targets
        self.policy = policy
        self.interfaces = interfaces
        self.linkSettleWindow = linkSettleWindow
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
