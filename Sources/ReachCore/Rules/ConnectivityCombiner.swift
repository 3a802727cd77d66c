import ReachSupport

/// Decides "connected or not, and why" from link facts and probe results. Pure: no I/O, no clock —
/// callers pass the time in.
///
/// The rules:
/// - Connected only when a usable link exists (see ``LinkAssessment``) and the ``TargetPolicy`` holds.
///   When every target is on loopback the link does not matter. Until a link source reports, links
///   do not gate the verdict.
/// - Losing the last usable link makes the verdict `disconnected` at once, with the link's reason.
///   Regaining it resets every target to `unknown`, asks for an immediate probe, and reports
///   `awaitingProbe` until results arrive.
/// - Each target's health moves through ``Hysteresis``: from `unknown` the first result decides
///   (there is no established state to protect); after that it takes `failuresBeforeDown`
///   consecutive failures to mark a healthy target down and `successesBeforeUp` consecutive
///   successes to bring it back.
/// - Results from an older ``ProbeEpoch`` are dropped.
/// - Behind a captive portal (see ``CaptivePortal``) the verdict is `disconnected`, reason
///   `captivePortal`, whatever the targets say: a portal's login page may answer them with 200.
///   The network's RFC 8908 API decides first; when it answers, nothing else is asked. Else an
///   intercepted check URL is a portal; else a failing target redirected to another host is.
/// - Every `disconnected` verdict says where the path breaks (``Fault``), from its reason and the
///   gateway and upstream evidence (`ConnectivityCombiner+Path`).
///
/// A result costs O(1) however many targets there are: health counts are kept as targets change,
/// and only the recorded target is compared for news.
struct ConnectivityCombiner: Sendable {
    /// What one input changed.
    struct Change: Sendable, Equatable {
        /// The verdict differs in meaning: publish it.
        var isNews = false
        /// Its state, reason or usable interfaces changed, not just a target's own status: what
        /// the log reports at the verdict's level (with 1,000 targets, start-up alone is 1,000 target changes).
        var isHeadline = false
        /// The state moved between `connected` and `disconnected`.
        var transition: TransitionDirection?
        var probeControlChanged = false
        /// The input was used (a stale or unknown probe result is not).
        var accepted = true
        /// A probe result moved its target between `healthy` and `unhealthy` (leaving `unknown` is
        /// not such a move: it is a first finding, not news of a change).
        var targetMove: TargetMove?
        /// The verdict's quality changed in meaning (``VerdictQuality/differsInMeaning(from:)``):
        /// news of its own, never a transition.
        var qualityChanged = false
    }

    /// A target that went down or came back.
    struct TargetMove: Sendable, Equatable {
        var target: String
        var health: TargetHealth
    }

    private var hystereses: [Hysteresis]
    private(set) var indexByName: [String: Int]
    private(set) var policy: TargetPolicy
    private(set) var filter: InterfaceFilter
    private var targetAddresses: [IPAddress]
    /// Each target's literal address, in configuration order (`nil` for a name): parsed once, not
    /// at each judgement of the quality (`ConnectivityCombiner+Quality`).
    private(set) var literalAddresses: [IPAddress?]
    /// The targets as configured, for what a failure says about a portal (a redirect's host, HTTPS).
    private(set) var targets: [ProbeTarget]
    private(set) var portalCheck: PortalCheck?
    /// What the check URL's last telling probe said on the current link.
    var portalCheckFinding: PortalCheck.Finding?
    /// When the latest check URL probe that answered began, and when the probe that took each
    /// unhealthy target down ended (``ProbeSpan``; without one, the result's time less its duration,
    /// and the result's time): a failure a portal can cause has no fault until the check URL has
    /// been asked after it, by a probe that began after it (`ConnectivityCombiner+Portal`).
    var portalCheckStarted: WallTime?
    var failedAt: [String: WallTime] = [:]
    /// The RFC 8908 API's last answer per interface, and when it came.
    var portalAPIAnswers: [String: (answer: CaptivePortalAPIAnswer, at: WallTime)] = [:]
    /// What the default gateway and the upstream reference showed in the last round while targets
    /// failed without an answer (`ConnectivityCombiner+Path`); forgotten with the link.
    var pathEvidence: PathEvidenceRound?
    /// False when every target is on loopback, where no network link is involved.
    private(set) var requiresLink: Bool

    /// Set here and by the path rules (`ConnectivityCombiner+Paths`).
    var verdict: Verdict
    private(set) var links: LinkSnapshot?
    private(set) var assessment: LinkAssessment?
    private(set) var epoch = ProbeEpoch(rawValue: 0)
    private(set) var probeControl = ProbeControl()
    private(set) var isSleeping = false
    /// Targets per health, kept as results arrive so that the policy is decided in O(1).
    private var healthCounts: HealthCounts
    private var transitions = TransitionRule()
    private var hasAnyResult = false
    /// What the variants of the targets' probes found about each uplink and family (``ProbeVariant``).
    var variants: VariantFindings
    /// Each target's quality judge, in configuration order; `nil` for a target without a budget.
    var judges: [QualityJudge?]
    /// The counted targets' quality, judged again only when a target's health or quality, the
    /// links or the targets change (`ConnectivityCombiner+Quality`): a result costs O(1).
    var countedQuality: CountedQuality?
    var countedQualityIsStale = true

    init(
        targets: [ProbeTarget],
        policy: TargetPolicy,
        filter: InterfaceFilter,
        portalCheck: PortalCheck? = nil,
        variants: ProbeVariantSettings = ProbeVariantSettings(),
        now: WallTime
    ) {
        self.variants = VariantFindings(settings: variants)
        self.targets = targets
        self.portalCheck = portalCheck
        self.hystereses = targets.map(\.hysteresis)
        self.judges = targets.map(QualityJudge.init(for:))
        self.indexByName = Dictionary(
            targets.enumerated().map { ($1.name, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        self.policy = policy
        self.filter = filter
        self.literalAddresses = targets.map(\.endpoint.literalAddress)
        self.targetAddresses = literalAddresses.compactMap { $0 }
        self.requiresLink = !targets.allSatisfy(\.endpoint.isLoopback)
        self.verdict = Verdict(
            state: .unknown,
            reason: .starting,
            since: now,
            targets: targets.map(TargetStatus.init(target:))
        )
        self.healthCounts = HealthCounts(unknown: targets.count)
    }

    /// Whether the link gates the verdict and is currently usable (true before any link report).
    var isLinkUsable: Bool { !requiresLink || assessment?.isUsable != false }

    /// Whether `snapshot` would take away the last usable link: such news is applied at once, never coalesced.
    func wouldLoseLink(_ snapshot: LinkSnapshot) -> Bool {
        requiresLink && isLinkUsable
            && !LinkAssessment(snapshot, filter: filter, targetAddresses: targetAddresses).isUsable
    }

    mutating func apply(links snapshot: LinkSnapshot, at now: WallTime) -> Change {
        let wasUsable = isLinkUsable
        let previousRelevant = links.map(relevantInterfaces)
        links = snapshot
        assessment = LinkAssessment(snapshot, filter: filter, targetAddresses: targetAddresses)
        var control = probeControl
        var targetsChanged = false
        if wasUsable != isLinkUsable {
            epoch = epoch.next()
            if isLinkUsable {
                targetsChanged = resetTargets()
                control.immediateProbeRequests += 1
            }
        } else if isLinkUsable, let previousRelevant, previousRelevant != relevantInterfaces(snapshot) {
            // Address or route churn on a usable link: check the path now rather than at the next tick.
            control.immediateProbeRequests += 1
        }
        let pathsChanged = planPaths()
        countedQualityIsStale = true
        return settle(control: control, at: now, targetsChanged: targetsChanged || pathsChanged)
    }

    /// The link source is gone for good: judge by probes alone, as before the first snapshot,
    /// rather than keep the last one (which may say "no link" forever).
    mutating func forgetLinks(at now: WallTime) -> Change {
        guard links != nil else { return Change(accepted: false) }
        let wasUsable = isLinkUsable
        (links, assessment) = (nil, nil)
        var control = probeControl
        var targetsChanged = false
        if wasUsable != isLinkUsable {
            epoch = epoch.next()
            targetsChanged = resetTargets()
            control.immediateProbeRequests += 1
        }
        let pathsChanged = planPaths()
        return settle(control: control, at: now, targetsChanged: targetsChanged || pathsChanged)
    }

    mutating func record(
        _ result: ProbeResult,
        epoch resultEpoch: ProbeEpoch,
        span: ProbeSpan? = nil,
        at now: WallTime
    ) -> Change {
        // A cancelled probe (reachd stopping, a link change abandoning it) learned nothing about the network.
        guard resultEpoch == epoch, isLinkUsable, !isSleeping, result.failure?.reason != .cancelled else {
            return Change(accepted: false)
        }
        if let portalCheck, result.target == PortalCheck.probeName {
            // A check that failed before any answer learned nothing: the last answer stands.
            if let finding = portalCheck.finding(result) { portalCheckFinding = finding }
            let started = span?.began ?? WallTime(sinceEpoch: now.sinceEpoch - result.latency)
            portalCheckStarted = max(portalCheckStarted ?? started, started)
            return settle(control: probeControl, at: now)
        }
        guard let index = indexByName[result.target] else { return Change(accepted: false) }
        let before = verdict.targets[index].health
        let beforeReason = verdict.targets[index].unhealthyReason
        verdict.targets[index].record(result, hysteresis: hystereses[index], at: now)
        hasAnyResult = true
        let after = verdict.targets[index].health
        if after != before {
            count(index, from: before, to: after)
            failedAt[result.target] = after == .unhealthy ? span?.ended ?? now : nil
            countedQualityIsStale = true
        }
        let qualityChanged = judgeQuality(index, result, at: now)
        // A first finding (a target leaving `unknown`: at start, after a reload, a regained link or a
        // wake) is news with the rest of its round: when the last unknown target is found, or sooner
        // with a headline change (`settle`). One event per first finding made the first round as many
        // events as targets within milliseconds, more than a subscriber may fall behind (EventHub:
        // 32 events, 4 from 1,024 targets), so every event-stream client connected then was skipped
        // ahead however fast it read. Every event carries every target: the round's event shows all.
        let changed =
            before == .unknown
            ? healthCounts.unknown == 0
            : after != before || verdict.targets[index].unhealthyReason != beforeReason || qualityChanged
        var change = settle(control: probeControl, at: now, targetsChanged: changed)
        if after != before, before != .unknown, after != .unknown {
            change.targetMove = TargetMove(target: result.target, health: after)
        }
        return change
    }

    /// Takes a reloaded configuration. A target whose name is in `unchanged` keeps its status and
    /// hysteresis counts; a new or changed one starts from `unknown`; a removed one is forgotten.
    /// When the target list changed, the epoch moves on, so a probe that started under the old
    /// definition (an old URL, say) cannot vouch for the new one.
    mutating func reconfigure(
        targets: [ProbeTarget],
        unchanged: Set<String>,
        policy: TargetPolicy,
        filter: InterfaceFilter,
        portalCheck: PortalCheck?,
        variants settings: ProbeVariantSettings? = nil,
        at now: WallTime
    ) -> Change {
        let wasUsable = isLinkUsable
        let previous = Dictionary(verdict.targets.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var statuses = targets.map { target in
            unchanged.contains(target.name)
                ? previous[target.name] ?? TargetStatus(target: target)
                : TargetStatus(target: target)
        }
        let previousJudges = Dictionary(
            zip(self.targets.map(\.name), judges).map { ($0, $1) },
            uniquingKeysWith: { first, _ in first }
        )
        judges = targets.map { target in
            let kept = previousJudges[target.name] ?? nil
            return unchanged.contains(target.name) && kept?.budget == target.quality ? kept : QualityJudge(for: target)
        }
        for index in statuses.indices where judges[index]?.budget != statuses[index].qualityBudget {
            // A new budget is judged anew; the target's health stands.
            statuses[index].quality = nil
            statuses[index].qualityBudget = judges[index]?.budget
            statuses[index].qualityMeasures = judges[index].map { _ in QualityMeasures() }
        }
        countedQualityIsStale = true
        // A new or changed target that starts from `unknown` may look like a fresh status: count it by name.
        let targetsChanged = statuses != verdict.targets || unchanged.count != targets.count
        self.targets = targets
        if portalCheck != self.portalCheck { (self.portalCheck, portalCheckFinding) = (portalCheck, nil) }
        hystereses = targets.map(\.hysteresis)
        indexByName = Dictionary(targets.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.policy = policy
        self.filter = filter
        literalAddresses = targets.map(\.endpoint.literalAddress)
        targetAddresses = literalAddresses.compactMap { $0 }
        requiresLink = !targets.allSatisfy(\.endpoint.isLoopback)
        assessment = links.map { LinkAssessment($0, filter: filter, targetAddresses: targetAddresses) }
        verdict.targets = statuses
        healthCounts = HealthCounts(statuses.map(\.health))
        var control = probeControl
        if targetsChanged || wasUsable != isLinkUsable { epoch = epoch.next() }
        if isLinkUsable, !wasUsable || targetsChanged { control.immediateProbeRequests += 1 }
        let settingsChanged = settings.map { $0 != variants.settings } ?? false
        if let settings { variants.settings = settings }
        let pathsChanged = planPaths(targetsChanged: targetsChanged || settingsChanged)
        return settle(control: control, at: now, targetsChanged: targetsChanged || pathsChanged)
    }

    mutating func setSleeping(_ sleeping: Bool, at now: WallTime) -> Change {
        guard sleeping != isSleeping else { return Change(accepted: false) }
        isSleeping = sleeping
        epoch = epoch.next()
        var control = probeControl
        var targetsChanged = false
        if !sleeping {
            // Hours may have passed: what the targets said before the sleep is no evidence now.
            targetsChanged = resetTargets()
            control.immediateProbeRequests += 1
        }
        return settle(control: control, at: now, targetsChanged: targetsChanged)
    }

    mutating func requestImmediateProbe(at now: WallTime) -> Change {
        var control = probeControl
        control.immediateProbeRequests += 1
        return settle(control: control, at: now)
    }

    /// Recomputes the verdict and probe control, and says what changed.
    ///
    /// - Parameter targetsChanged: Whether a target's health or failure reason changed.
    mutating func settle(control proposed: ProbeControl, at now: WallTime, targetsChanged: Bool = false) -> Change {
        var control = proposed
        control.suspension = isSleeping ? .systemSleeping : (isLinkUsable ? nil : .noUsableLink)
        var change = Change(probeControlChanged: control != probeControl)
        probeControl = control

        let (previousState, previousReason, previousPortal, previousFault, previousQuality) = (
            verdict.state, verdict.reason, verdict.portal, verdict.fault, verdict.quality
        )
        let (state, reason, portal) = decide()
        let fault =
            state == .disconnected && !awaitsPortalCheck(reason, at: now) ? fault(for: reason) : nil
        let usableInterfaces = assessment?.usableInterfaces ?? []
        let interfacesChanged = usableInterfaces != verdict.usableInterfaces
        verdict.state = state
        verdict.reason = reason
        verdict.portal = portal
        verdict.fault = fault
        let portalChanged = portal.map { $0.differsInMeaning(from: previousPortal) } ?? (previousPortal != nil)
        if interfacesChanged { verdict.usableInterfaces = usableInterfaces }
        if state != previousState { verdict.since = now }
        verdict.quality = state == .connected ? verdictQuality(previous: previousQuality, at: now) : nil
        change.qualityChanged =
            verdict.quality.map { $0.differsInMeaning(from: previousQuality) } ?? (previousQuality != nil)
        change.transition = transitions.next(state)
        change.isHeadline =
            state != previousState || reason != previousReason || fault != previousFault || interfacesChanged
            || portalChanged
        change.isNews = change.isHeadline || targetsChanged || change.qualityChanged
        return change
    }

    private func decide() -> (ConnectivityState, VerdictReason, CaptivePortal?) {
        if requiresLink, let blocker = assessment?.blocker {
            return (.disconnected, VerdictReason(blocker), nil)
        }
        let outcome = evaluatePolicy()
        let portal = networkPortal(failing: outcome)
        if let portal, portal.isCaptive {
            return (.disconnected, .captivePortal, portal)
        }
        switch outcome {
        case .met:
            return (.connected, .healthy, portal)
        case .failed(let target):
            let status = verdict.targets[target]
            // An API that answered is not second-guessed (`networkPortal`).
            if portalAPIAnswers.isEmpty, let portal = redirectPortal(status, of: targets[target]) {
                return (.disconnected, .captivePortal, portal)
            }
            // An unhealthy target always has a recorded failure; `cancelled` is unreachable.
            return (
                .disconnected, .targetFailed(target: status.name, reason: status.unhealthyReason ?? .cancelled), portal
            )
        case .pending:
            if verdict.state == .unknown {
                return (.unknown, links == nil && !hasAnyResult ? .starting : .awaitingProbe, portal)
            }
            return (.disconnected, .awaitingProbe, portal)
        }
    }

    private func evaluatePolicy() -> PolicyOutcome {
        policy.outcome(healthCounts)
    }

    private mutating func count(_ index: Int, from old: TargetHealth, to new: TargetHealth) {
        healthCounts.move(index, from: old, to: new)
    }

    /// Sets every target back to `unknown`; returns whether any was not.
    private mutating func resetTargets() -> Bool {
        let changed = healthCounts.unknown != verdict.targets.count
        for index in verdict.targets.indices {
            verdict.targets[index].health = .unknown
            verdict.targets[index].consecutiveSuccesses = 0
            verdict.targets[index].consecutiveFailures = 0
        }
        let qualityChanged = resetQuality()
        healthCounts = HealthCounts(unknown: verdict.targets.count)
        // A new link may be another network, with or without a portal, behind another gateway.
        (portalCheckFinding, pathEvidence, failedAt) = (nil, nil, [:])
        let pathsChanged = resetPaths()
        return changed || pathsChanged || qualityChanged
    }

    /// The facts that matter for reaching the targets: admitted, non-loopback interfaces.
    private func relevantInterfaces(_ snapshot: LinkSnapshot) -> [InterfaceFacts] {
        snapshot.interfaces.filter { $0.kind != .loopback && filter.admits($0.name) }
    }
}

extension TargetStatus {
    /// Applies one probe result through hysteresis.
    mutating func record(_ result: ProbeResult, hysteresis: Hysteresis, at now: WallTime) {
        lastResult = result
        lastCheckedAt = now
        if let failure = result.failure { lastFailure = failure }
        if let seen = result.certificate { certificate = seen }
        if result.isSuccess {
            consecutiveSuccesses += 1
            consecutiveFailures = 0
            if health == .unknown || (health == .unhealthy && consecutiveSuccesses >= hysteresis.successesBeforeUp) {
                health = .healthy
            }
        } else {
            consecutiveFailures += 1
            consecutiveSuccesses = 0
            if health == .unknown || (health == .healthy && consecutiveFailures >= hysteresis.failuresBeforeDown) {
                health = .unhealthy
            }
        }
    }
}
