import AsyncHTTPClient
import Logging
import ReachConfig
import ReachCore
import ServiceLifecycle
import Synchronization

/// Hook directories and webhooks, registered with the monitor as reactions for as long as this
/// service runs: restoration work reaches the programs that own it.
///
/// Each hook directory is one reaction for its direction; each webhook is one reaction for the
/// directions it subscribes to, so its receiver gets transitions in order and always ends at the
/// latest state. The monitor's rule applies to all of them (see
/// ``ReachCore/ConnectivityMonitor/addReaction(named:on:timeout:_:)``).
package final class Reactions: Service, Sendable {
    private struct State {
        var hooks: HookSettings
        var webhooks: [WebhookSettings]
        /// Whether ``run()`` runs: only then are reactions registered.
        var isRunning = false
        /// Made with the first webhook, closed when ``run()`` ends.
        var client: HTTPClient?
        /// The registered hook reactions and the settings they were made with.
        var hookIDs: (settings: HookSettings, ids: [CallbackID])?
        /// The registered webhook reactions, each with its settings.
        var webhookIDs: [(settings: WebhookSettings, id: CallbackID)] = []
    }

    private let monitor: ConnectivityMonitor
    private let observer: (any ReactionObserver)?
    private let logger: Logger
    /// The first 64 hook names keep their own metrics label, across reconfigurations.
    private let names = HookNames()
    private let state: Mutex<State>

    /// - Parameters:
    ///   - hooks: The hook directories; a missing one simply has no hooks.
    ///   - webhooks: Each becomes one reaction.
    ///   - observer: Counts hook runs and deliveries (the metrics).
    package init(
        monitor: ConnectivityMonitor,
        hooks: HookSettings,
        webhooks: [WebhookSettings],
        observer: (any ReactionObserver)?,
        logger: Logger
    ) {
        self.monitor = monitor
        self.observer = observer
        self.logger = logger
        self.state = Mutex(State(hooks: hooks, webhooks: webhooks))
    }

    /// Registers the reactions, keeps them until graceful shutdown, then removes them and closes
    /// the webhooks' HTTP client.
    package func run() async throws {
        state.withLock { $0.isRunning = true }
        reregister()
        try? await gracefulShutdown()
        let (ids, client) = state.withLock { state in
            defer {
                state.isRunning = false
                state.client = nil
                state.hookIDs = nil
                state.webhookIDs = []
            }
            return ((state.hookIDs?.ids ?? []) + state.webhookIDs.map(\.id), state.client)
        }
        for id in ids { monitor.removeCallback(id) }
        try? await client?.shutdown()
    }

    /// The webhooks' HTTP client, made on first use.
    private func client(in state: inout State) -> HTTPClient {
        if let client = state.client { return client }
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        // A failed connect is retried by the sender's own backoff, not silently by the pool.
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: configuration,
            backgroundActivityLogger: logger
        )
        state.client = client
        return client
    }

    /// Applies a reloaded configuration at the next transition. Reactions whose settings did not
    /// change stay as they are (a run under way keeps its place under the reaction rule); changed
    /// ones are removed (a run under way finishes, alongside the new registration) and registered anew.
    package func reconfigure(hooks: HookSettings, webhooks: [WebhookSettings]) {
        state.withLock { state in
            state.hooks = hooks
            state.webhooks = webhooks
        }
        reregister()
    }

    /// Brings the registrations in line with the current settings, while running, and logs the
    /// result when anything changed. The lock is held throughout, so that two reconfigurations
    /// cannot both register.
    private func reregister() {
        let registered: (hooks: [String], webhooks: [String], settings: HookSettings)? = state.withLock { state in
            guard state.isRunning else { return nil }
            var hooks: [String] = []
            var changed = false
            if state.hookIDs?.settings != state.hooks {
                changed = true
                for id in state.hookIDs?.ids ?? [] { monitor.removeCallback(id) }
                var ids: [CallbackID] = []
                for direction in TransitionDirection.allCases {
                    let runner = HookRunner(
                        direction: direction,
                        settings: state.hooks,
                        observer: observer,
                        names: names,
                        logger: logger
                    )
                    hooks += checkAtStart(runner.directory)
                    ids.append(
                        monitor.addReaction(named: "hooks \(runner.directory.path)", on: [direction], timeout: nil) {
                            transition in
                            try await runner.run(for: transition)
                        }
                    )
                }
                state.hookIDs = (state.hooks, ids)
            }
            var webhookIDs: [(settings: WebhookSettings, id: CallbackID)] = []
            for settings in state.webhooks {
                if let kept = state.webhookIDs.first(where: { $0.settings == settings }) {
                    webhookIDs.append(kept)
                    continue
                }
                changed = true
                let sender = WebhookSender(
                    settings: settings,
                    client: client(in: &state),
                    observer: observer,
                    logger: logger
                )
                let monitor = self.monitor
                let id = monitor.addReaction(named: "webhook \(settings.name)", on: settings.events, timeout: nil) {
                    transition in
                    try await sender.deliver(transition, likelyConnected: monitor.isLikelyConnected)
                }
                webhookIDs.append((settings, id))
            }
            for old in state.webhookIDs where !webhookIDs.contains(where: { $0.id == old.id }) {
                monitor.removeCallback(old.id)
                changed = true
            }
            state.webhookIDs = webhookIDs
            return changed ? (hooks, state.webhooks.map(\.name), state.hooks) : nil
        }
        guard let registered else { return }
        observer?.reactionsConfigured(hooks: registered.hooks, webhooks: registered.webhooks)
        logger.info(
            "hooks in \(registered.settings.restoredDirectory) and \(registered.settings.lostDirectory) (re-read on each transition); \(registered.webhooks.count) webhook(s)"
        )
    }

    /// Reads a hook directory once, so that a refused file or an unusable directory is reported
    /// now rather than at the first transition; the names of the hooks that will run.
    private func checkAtStart(_ directory: HookDirectory) -> [String] {
        switch directory.read() {
        case .missing:
            return []
        case .unusable(let reason):
            logger.warning(
                "hook directory \(directory.path) not used: \(reason)",
                metadata: ReachLogEvent.hookFailed.metadata
            )
            return []
        case .entries(let entries):
            var hooks: [String] = []
            for entry in entries {
                switch entry {
                case .hook(let name, _):
                    hooks.append(names.label(name))
                case .refused(let name, let path, let reason):
                    logger.warning(
                        "hook \(path) will not run: \(reason)",
                        metadata: ReachLogEvent.hookFailed.metadata.merging(["hook": "\(name)"]) { $1 }
                    )
                }
            }
            return hooks
        }
    }
}
