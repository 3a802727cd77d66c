import Logging
import ReachSupport
import Synchronization

/// reachd's in-process API: feed it link facts and probe results, ask it whether the machine is
/// connected, subscribe to every change, and register callbacks for restoration and loss.
///
/// Inputs are synchronous and cheap, so a link source can deliver from its own thread without a
/// hop. The verdict, the hub and the probe control change together under one lock, so subscribers
/// see changes in the order they were decided. Logging happens outside the lock.
///
/// Call ``run()`` (the daemon runs it as a service): it applies coalesced link changes and runs
/// callbacks. When it returns, every subscription ends.
///
/// ```swift
/// let monitor = ConnectivityMonitor(configuration: .init(targets: targets), clock: clock, logger: logger)
/// monitor.onConnectivityRestored(named: "warm-cache") { _ in try await cache.warm() }
/// monitor.onConnectivityRestored(named: "resume-uploads") { _ in await uploads.resume() }
/// for await event in monitor.subscribe() { print(event.verdict.state) }
/// ```
public final class ConnectivityMonitor: Sendable {
    /// Tunables, with defaults that match the product's promises.
    public struct Configuration: Sendable {
        package var targets: [ProbeTarget]
        package var policy: TargetPolicy
        package var interfaceFilter: InterfaceFilter
        /// Link gains and address/route churn wait this long for more news before they are applied
        /// (and trigger an immediate probe). Link loss is applied at once, always.
        package var linkSettleWindow: Duration
        /// How long after the last probe result ``ConnectivityMonitor/isLikelyConnected`` keeps
        /// trusting a `connected` verdict at the least; longer when the targets are probed less
        /// often, until the next result is due.
        package var likelyConnectedWindow: Duration
        /// The default timeout of a callback.
        package var callbackTimeout: Duration
        /// How many events a subscriber may fall behind before the oldest it has not read are
        /// dropped (fewer with more than 128 targets, see ``EventHub``).
        package var subscriberBufferLimit: Int
        /// Events kept for subscribers that resume (fewer with more than 64 targets, see ``EventHub``).
        package var historyLimit: Int
        /// The sequence number of this run's first event. Starting each run somewhere new (the
        /// daemon uses the wall clock in microseconds) means an id a client kept from an earlier
        /// run is never mistaken for one of this run's: resuming with it gets a reset, not silence.
        package var firstSequence: UInt64 = 1
        /// The captive-portal check URL, probed with the targets; `nil` when none is configured.
        package var portalCheck: PortalCheck?
        /// Which paths are probed besides the routes' (each uplink, each family; see ``ProbeVariantSettings``).
        package var variants = ProbeVariantSettings()

        package init(
            targets: [ProbeTarget],
            policy: TargetPolicy = .all,
            interfaceFilter: InterfaceFilter = InterfaceFilter(),
            linkSettleWindow: Duration = .milliseconds(100),
            likelyConnectedWindow: Duration = .seconds(5),
            callbackTimeout: Duration = .seconds(30),
            subscriberBufferLimit: Int = 32,
            historyLimit: Int = 256
        ) {
            self.targets = targets
            self.policy = policy
            self.interfaceFilter = interfaceFilter
            self.linkSettleWindow = linkSettleWindow
            self.likelyConnectedWindow = likelyConnectedWindow
            self.callbackTimeout = callbackTimeout
            self.subscriberBufferLimit = subscriberBufferLimit
            self.historyLimit = historyLimit
        }

        /// How long a probe result keeps a `connected` verdict likely: ``likelyConnectedWindow``,
        /// or until the next result of the most often probed target is due at the latest, when
        /// that is later. A window shorter than the probe interval turned a steadily connected
        /// machine "not likely connected" between two probes.
        var evidenceLifetime: Duration {
            let nextResultDue = targets.map {
                ProbeSchedule.longestGapBetweenResults(interval: $0.interval, timeout: $0.timeout)
            }.min()
            return max(likelyConnectedWindow, nextResultDue ?? .zero)
        }
    }

    struct State {
        var combiner: ConnectivityCombiner
        /// A link snapshot waiting out the settle window.
        var pendingLinks: LinkSnapshot?
        /// Uptime of the last accepted probe result.
        var lastEvidence: Duration?
        /// The configuration's ``Configuration/evidenceLifetime``, for the targets as configured now.
        var evidenceLifetime: Duration
        /// The targets as configured now (a reload replaces them).
        var targets: [ProbeTarget]
        var linkSettleWindow: Duration
    }

    let configuration: Configuration
    let clock: MonitorClock
    let logger: Logger
    let state: Mutex<State>
    private let hub: EventHub
    private let control: Broadcast<ProbeControl>
    /// The variants of the targets' probes to run (``variantProbes()``).
    let variantPlans: Broadcast<[ProbeTarget]>
    /// Rings after every step that took its input, for ``updates()``.
    private let updated: Broadcast<Void>
    /// Callbacks, hooks and webhooks, and their runs.
    let reactions: TransitionReactions
    private let settleRequests: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)

    package init(configuration: Configuration, clock: MonitorClock, logger: Logger) {
        let combiner = ConnectivityCombiner(
            targets: configuration.targets,
            policy: configuration.policy,
            filter: configuration.interfaceFilter,
            portalCheck: configuration.portalCheck,
            variants: configuration.variants,
            now: clock.wallTime
        )
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.state = Mutex(
            State(
                combiner: combiner,
                evidenceLifetime: configuration.evidenceLifetime,
                targets: configuration.targets,
                linkSettleWindow: configuration.linkSettleWindow
            )
        )
        self.hub = EventHub(
            initial: combiner.verdict,
            firstSequence: configuration.firstSequence,
            bufferLimit: configuration.subscriberBufferLimit,
            historyLimit: configuration.historyLimit
        )
        self.control = Broadcast(initial: combiner.probeControl, bufferLimit: 1)
        self.variantPlans = Broadcast(initial: combiner.variantProbes, bufferLimit: 1)
        self.updated = Broadcast(initial: (), bufferLimit: 1)
        self.reactions = TransitionReactions(clock: clock, logger: logger)
        self.settleRequests = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    // MARK: Inputs

    /// The link source has failed for good: from now on the verdict rests on probes alone, as
    /// before the first snapshot, instead of on the last snapshot it sent.
    package func forgetLinks() {
        let published: Publication? = state.withLock { state in
            state.pendingLinks = nil
            return apply(&state) { $0.forgetLinks(at: clock.wallTime) }
        }
        log(published)
    }

    /// Takes a complete link snapshot from the link source.
    package func update(links snapshot: LinkSnapshot) {
        let published: Publication? = state.withLock { state in
            let isFirst = state.combiner.links == nil
            if isFirst || state.linkSettleWindow == .zero || state.combiner.wouldLoseLink(snapshot) {
                state.pendingLinks = nil
                return apply(&state) { $0.apply(links: snapshot, at: clock.wallTime) }
            }
            let startsWindow = state.pendingLinks == nil
            state.pendingLinks = snapshot
            if startsWindow { settleRequests.continuation.yield() }
            return nil
        }
        log(published)
    }

    /// The epoch to stamp on a probe that starts now; pass it back with the result.
    package var probeEpoch: ProbeEpoch { state.withLock { $0.combiner.epoch } }

    /// Takes a probe result. Results from an older epoch, for unknown targets, or arriving while
    /// probing is suspended are dropped. `span` says when the probe ran, where the scheduler saw it;
    /// without it (a pushed result) the result is taken to have ended now.
    package func record(_ result: ProbeResult, epoch: ProbeEpoch, span: ProbeSpan? = nil) {
        let (accepted, published) = state.withLock { state in
            var accepted = false
            let published = apply(&state) { combiner in
                let change = combiner.record(result, epoch: epoch, span: span, at: clock.wallTime)
                accepted = change.accepted
                return change
            }
            if accepted { state.lastEvidence = clock.uptime }
            return (accepted, published)
        }
        if !accepted {
            logger.debug(
                "probe result dropped: it started before the last link or sleep change, or names no target",
                metadata: ["target": "\(result.target)", "epoch": "\(epoch.rawValue)"]
            )
        }
        log(published)
    }

    /// Takes the system's sleep state (logind's `PrepareForSleep`): probing stops while asleep, and
    /// every target is probed at once on waking.
    package func setSystemSleeping(_ sleeping: Bool) {
        let (changed, published) = state.withLock { state in
            let wasSleeping = state.combiner.isSleeping
            let published = apply(&state) { $0.setSleeping(sleeping, at: clock.wallTime) }
            return (wasSleeping != sleeping, published)
        }
        if changed {
            logger.info(
                sleeping ? "system is going to sleep: probing suspended" : "system woke: probing every target now"
            )
        }
        log(published)
    }

    /// Takes a reloaded configuration's targets, policy, interface filter, settle window and
    /// likely-connected window without ending any subscription. A target whose definition is
    /// unchanged keeps its status; a new or changed one starts from `unknown` and is probed at
    /// once; a removed one is forgotten. The verdict is decided again, and a transition that
    /// follows runs callbacks as any other does.
    ///
    /// The probe scheduler is not told: the caller replaces it when the target list changed (see
    /// ``targets``). The other settings (callback timeout, hub sizes) are fixed at start.
    package func reconfigure(_ configuration: Configuration) {
        let published: Publication? = state.withLock { state in
            let before = Dictionary(state.targets.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            // A new budget alone keeps the target's health: quality never moves the verdict.
            let unchanged = Set(
                configuration.targets.filter { before[$0.name]?.judgedAlike($0) == true }.map(\.name)
            )
            state.targets = configuration.targets
            state.linkSettleWindow = configuration.linkSettleWindow
            state.evidenceLifetime = configuration.evidenceLifetime
            return apply(&state) {
                $0.reconfigure(
                    targets: configuration.targets,
                    unchanged: unchanged,
                    policy: configuration.policy,
                    filter: configuration.interfaceFilter,
                    portalCheck: configuration.portalCheck,
                    variants: configuration.variants,
                    at: clock.wallTime
                )
            }
        }
        log(published)
    }

    /// The link facts last applied (`nil` before the first report): where the path evidence finds
    /// the default gateways.
    package var links: LinkSnapshot? { state.withLock { $0.combiner.links } }

    /// The targets as configured now: those given at start, or by the last ``reconfigure(_:)``.
    package var targets: [ProbeTarget] { state.withLock { $0.targets } }

    /// Takes what the network's captive-portal API (RFC 8908) answered for `interface`; `nil` when
    /// it has no API or the API could not be asked, which leaves the decision to the probes.
    package func update(portalAPI answer: CaptivePortalAPIAnswer?, interface: String) {
        let published = state.withLock { state in
            apply(&state) { $0.apply(portalAPI: answer, interface: interface, at: clock.wallTime) }
        }
        log(published)
    }

    /// Takes a round of path evidence (the gateway's echo or neighbour entry, the upstream
    /// reference) gathered while a target fails without an answer; `nil` forgets it. It places
    /// such a failure on the gateway, the internet connection or the server (``Fault/init(_:evidence:)``);
    /// until the first round is in, a disconnected verdict's fault is not known.
    package func update(pathEvidence round: PathEvidenceRound?) {
        let published = state.withLock { state in apply(&state) { $0.apply(pathEvidence: round, at: clock.wallTime) } }
        log(published)
    }

    /// Asks the scheduler to probe every target now (`POST /v1/check`, `reachctl check`).
    package func requestImmediateProbe() {
        let published = state.withLock { state in apply(&state) { $0.requestImmediateProbe(at: clock.wallTime) } }
        log(published)
    }

    // MARK: Outputs

    /// The current verdict, with the freshest target results, and the sequence number of the latest event.
    package var current: ConnectivityEvent {
        state.withLock { ConnectivityEvent(sequence: hub.latest.sequence, verdict: $0.combiner.verdict) }
    }

    /// A synchronous best guess: `true` while the verdict is `connected` and the last probe result is
    /// no older than the next one is due (the most often probed target's interval, half a second
    /// and its timeout; `likelyConnectedWindow`, 5 s, at the least); `false` otherwise — stale
    /// evidence is no evidence.
    package var isLikelyConnected: Bool {
        state.withLock { state in
            guard state.combiner.verdict.state == .connected, let evidence = state.lastEvidence else { return false }
            return clock.uptime - evidence <= state.evidenceLifetime
        }
    }

    /// Subscribes to verdicts: the current one first, then every change, in order, numbered. See
    /// ``EventHub`` for what a lagging subscriber sees. Cancelling the consuming task unsubscribes.
    ///
    /// - Parameter lastSequence: Resume after this sequence number (an SSE `Last-Event-ID`).
    package func subscribe(resumingAfter lastSequence: UInt64? = nil) -> Subscription<ConnectivityEvent> {
        hub.subscribe(resumingAfter: lastSequence)
    }

    package var subscriberCount: Int { hub.subscriberCount }

    /// What the probe scheduler should do now.
    package var currentProbeControl: ProbeControl {
        state.withLock { $0.combiner.probeControl }
    }

    /// What the probe scheduler should do: the current value first, then every change.
    package func probeControl() -> Subscription<ProbeControl> {
        control.subscribe()
    }

    /// Wakes on every change to what ``current`` and ``currentProbeControl`` read, check times
    /// included: once at once, then after each accepted probe result, link or sleep change,
    /// reload and immediate-probe request. Several changes may ring once; the subscriber reads
    /// what it needs. For waiting on a probe result (`POST /v1/check`), which
    /// ``subscribe(resumingAfter:)`` does not tell: a new check time alone is not an event.
    package func updates() -> Subscription<Void> {
        updated.subscribe()
    }

    /// Every callback run's outcome, from now on.
    package func callbackReports() -> Subscription<CallbackReport> {
        reactions.callbackReports()
    }

    // MARK: Running

    /// Applies coalesced link changes and runs callbacks until the task is cancelled; then ends
    /// every subscription.
    package func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.reactions.run() }
            group.addTask { await self.applySettledLinks() }
        }
        hub.finish()
        control.finish()
        variantPlans.finish()
        updated.finish()
        reactions.finish()
        settleRequests.continuation.finish()
    }

    private func applySettledLinks() async {
        for await _ in settleRequests.stream {
            guard (try? await clock.sleep(for: state.withLock { $0.linkSettleWindow })) != nil else { return }
            let published: Publication? = state.withLock { state in
                guard let pending = state.pendingLinks else { return nil }
                state.pendingLinks = nil
                return apply(&state) { $0.apply(links: pending, at: clock.wallTime) }
            }
            log(published)
        }
    }

    /// Runs one combiner step and publishes what it changed. Called with the lock held, so the hub,
    /// the probe control and the callback queue see changes in decision order.
    func apply(
        _ state: inout State,
        _ step: (inout ConnectivityCombiner) -> ConnectivityCombiner.Change
    ) -> Publication? {
        // Not the whole verdict: holding it would make the step copy every target's status.
        let previous = (
            state: state.combiner.verdict.state, usableInterfaces: state.combiner.verdict.usableInterfaces,
            quality: state.combiner.verdict.quality?.state
        )
        let variantGeneration = state.combiner.variantProbesGeneration
        let change = step(&state.combiner)
        if change.probeControlChanged {
            control.send(state.combiner.probeControl)
        }
        if state.combiner.variantProbesGeneration != variantGeneration {
            variantPlans.send(state.combiner.variantProbes)
        }
        // Only when someone waits: a probe result is the hot path.
        if change.accepted, updated.hasSubscribers { updated.send(()) }
        guard change.isNews else { return nil }
        let event = hub.publish(state.combiner.verdict)
        if let direction = change.transition {
            let transition = ConnectivityTransition(
                direction: direction,
                sequence: event.sequence,
                verdict: event.verdict
            )
            reactions.deliver(transition)
        }
        return Publication(event: event, change: change, previous: previous)
    }

    /// A published event, what changed, and the verdict before it, for the log.
    struct Publication {
        let event: ConnectivityEvent
        let change: ConnectivityCombiner.Change
        let previous: (state: ConnectivityState, usableInterfaces: [String], quality: QualityState?)
    }
}
