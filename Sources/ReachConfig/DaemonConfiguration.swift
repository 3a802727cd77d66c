import Logging
import ReachCore
import ReachSupport

/// reachd's configuration, validated: the engine's (``engine``, whose settings it reads as its
/// own: `configuration.targets`) and what only a daemon serves: the listeners and their token, the
/// hooks and webhooks, the history, the log.
///
/// The configuration file holds both; ``load(from:environment:webConfigFile:)`` reads it.
@dynamicMemberLookup
package struct DaemonConfiguration: Sendable, Equatable {
    /// What the engine runs on: targets, policy, interfaces, portal, upstream, certificate warnings, variants.
    package var engine: Configuration
    /// Where the status endpoint listens.
    package var listen: HostPort
    /// The token clients of the status endpoint must send; required when ``listen`` is not loopback.
    package var apiToken: Secret?
    /// How long the status endpoint keeps a connection that sends nothing while no response is
    /// being written (an event stream is never idle).
    package var apiIdleTimeout: Duration
    /// A unix socket the status endpoint also listens on; off when `nil`.
    package var socket: String?
    /// TLS and basic auth on the status listener (``listen``), from an exporter-toolkit web
    /// configuration file; plain HTTP when `nil`.
    package var web: WebConfiguration?
    /// Where the `grpc.health.v1.Health` service listens; off when `nil`.
    package var grpcHealthListen: HostPort?
    package var log: LogSettings
    /// Hook directories and their timeouts (the `hooks` section).
    package var hooks = HookSettings()
    /// Where transitions are POSTed (the `webhooks` section).
    package var webhooks: [WebhookSettings] = []
    /// Where and how long reachd keeps its history (the `history` section). Off for a
    /// configuration built in code; the parser turns it on, as the shipped file documents.
    package var history = HistorySettings(enabled: false)

    package init(
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
        self.engine = Configuration(
            targets: targets,
            policy: policy,
            interfaces: interfaces,
            linkSettleWindow: linkSettleWindow
        )
        self.listen = listen
        self.apiToken = apiToken
        self.apiIdleTimeout = apiIdleTimeout
        self.socket = socket
        self.grpcHealthListen = grpcHealthListen
        self.log = log
    }

    /// The engine's settings, read and written as the daemon's own.
    package subscript<Value>(dynamicMember setting: WritableKeyPath<Configuration, Value>) -> Value {
        get { engine[keyPath: setting] }
        set { engine[keyPath: setting] = newValue }
    }

    /// What the engine derives from its settings (``Configuration/probedTargets``, ``Configuration/monitor``).
    package subscript<Value>(dynamicMember derived: KeyPath<Configuration, Value>) -> Value {
        engine[keyPath: derived]
    }
}

/// Where log lines go and how much is said.
package struct LogSettings: Sendable, Equatable {
    package enum Target: String, Sendable, CaseIterable {
        /// One logfmt-style line per event on standard error.
        case stderr
        /// Structured entries in the systemd journal (`REACHD_*` fields, `MESSAGE_ID`s for `journalctl -x`).
        case journald
        /// The journal when standard error is the journal's stream or journald answers; else standard error.
        case auto
    }

    package var target: Target
    package var level: Logger.Level

    package init(target: Target = .auto, level: Logger.Level = .info) {
        self.target = target
        self.level = level
    }
}
