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
struct ConnectivityCombiner: Sendable {
    /// What one input changed.
    struct Change: Sendable, Equatable {
        /// The verdict differs in meaning: publish it.
        var isNews = false
        /// The state moved between `connected` and `disconnected`.
        var transition: TransitionDirection?
        var probeControlChanged = false
        /// The input was used (a stale or unknown probe result is not).
        var accepted = true
    }

    private let hystereses: [Hysteresis]
    private let indexByName: [String: Int]
    let policy: TargetPolicy
    let filter: InterfaceFilter
    private let targetAddresses: [IPAddress]
    /// False when every target is on loopback, where no network link is involved.
    let requiresLink: Bool

    private(set) var verdict: Verdict
    private(set) var links: LinkSnapshot?
    private(set) var assessment: LinkAssessment?
    private(set) var epoch = ProbeEpoch(rawValue: 0)
    private(set) var probeControl = ProbeControl()
    private(set) var isSleeping = false

    init(targets: [ProbeTarget], policy: TargetPolicy, filter: InterfaceFilter, now: WallTime) {
        self.hystereses = targets.map(\.hysteresis)
        self.indexByName = Dictionary(targets.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.policy = policy
        self.filter = filter
        self.targetAddresses = targets.compactMap(\.endpoint.literalAddress)
        self.requiresLink = !targets.allSatisfy(\.endpoint.isLoopback)
        self.verdict = Verdict(
            state: .unknown, reason: .starting, since: now,
            targets: targets.map { TargetStatus(name: $0.name, kind: $0.kind) })
    }

    /// Whether the link gates the verdict and is currently usable (true before any link report).
    var isLinkUsable: Bool { !requiresLink || assessment?.isUsable != false }

    /// Whether `snapshot` would take away the last usable link: such news is applied at once, never coalesced.
    func wouldLoseLink(_ snapshot: LinkSnapshot) -> Bool {
        requiresLink && isLinkUsable && !LinkAssessment(snapshot, filter: filter, targetAddresses: targetAddresses).isUsable
    }

    mutating func apply(links snapshot: LinkSnapshot, at now: WallTime) -> Change {
        let wasUsable = isLinkUsable
        let previousRelevant = links.map(relevantInterfaces)
        links = snapshot
        assessment = LinkAssessment(snapshot, filter: filter, targetAddresses: targetAddresses)
        var control = probeControl
        if wasUsable != isLinkUsable {
            epoch = epoch.next()
            if isLinkUsable {
                resetTargets()
                control.immediateProbeRequests += 1
            }
        } else if isLinkUsable, let previousRelevant, previousRelevant != relevantInterfaces(snapshot) {
            // Address or route churn on a usable link: check the path now rather than at the next tick.
            control.immediateProbeRequests += 1
        }
        return settle(control: control, at: now)
    }

    mutating func record(_ result: ProbeResult, epoch resultEpoch: ProbeEpoch, at now: WallTime) -> Change {
        guard resultEpoch == epoch, isLinkUsable, !isSleeping, let index = indexByName[result.target] else {
            return Change(accepted: false)
        }
        verdict.targets[index].record(result, hysteresis: hystereses[index], at: now)
        return settle(control: probeControl, at: now)
    }

    mutating func setSleeping(_ sleeping: Bool, at now: WallTime) -> Change {
        guard sleeping != isSleeping else { return Change(accepted: false) }
        isSleeping = sleeping
        epoch = epoch.next()
        var control = probeControl
        if !sleeping { control.immediateProbeRequests += 1 }
        return settle(control: control, at: now)
    }

    mutating func requestImmediateProbe(at now: WallTime) -> Change {
        var control = probeControl
        control.immediateProbeRequests += 1
        return settle(control: control, at: now)
    }

    /// Recomputes the verdict and probe control, and says what changed.
    private mutating func settle(control proposed: ProbeControl, at now: WallTime) -> Change {
        var control = proposed
        control.suspension = isSleeping ? .systemSleeping : (isLinkUsable ? nil : .noUsableLink)
        var change = Change(probeControlChanged: control != probeControl)
        probeControl = control

        let previous = verdict
        let (state, reason) = decide()
        verdict.state = state
        verdict.reason = reason
        verdict.usableInterfaces = assessment?.usableInterfaces ?? []
        if state != previous.state {
            verdict.since = now
            if previous.state != .unknown, state != .unknown {
                change.transition = state == .connected ? .restored : .lost
            }
        }
        change.isNews = verdict.differsInMeaning(from: previous)
        return change
    }

    private func decide() -> (ConnectivityState, VerdictReason) {
        if requiresLink, let blocker = assessment?.blocker {
            return (.disconnected, VerdictReason(blocker))
        }
        switch evaluatePolicy() {
        case .met:
            return (.connected, .healthy)
        case .failed(let target):
            let status = verdict.targets[target]
            // An unhealthy target always has a recorded failure; `cancelled` is unreachable.
            return (.disconnected, .targetFailed(target: status.name, reason: status.unhealthyReason ?? .cancelled))
        case .pending:
            if verdict.state == .unknown {
                return (.unknown, links == nil && verdict.targets.allSatisfy { $0.lastResult == nil } ? .starting : .awaitingProbe)
            }
            return (.disconnected, .awaitingProbe)
        }
    }

    private enum PolicyOutcome {
        case met
        /// Carries the index of the first unhealthy target.
        case failed(Int)
        case pending
    }

    private func evaluatePolicy() -> PolicyOutcome {
        let targets = verdict.targets
        let healthy = targets.count { $0.health == .healthy }
        let unknown = targets.count { $0.health == .unknown }
        let firstUnhealthy = targets.firstIndex { $0.health == .unhealthy }
        let required: Int
        switch policy {
        case .all: required = targets.count
        case .any: required = min(1, targets.count)
        case .quorum(let k): required = k
        }
        if healthy >= required { return .met }
        if healthy + unknown < required, let firstUnhealthy { return .failed(firstUnhealthy) }
        return .pending
    }

    private mutating func resetTargets() {
        for index in verdict.targets.indices {
            verdict.targets[index].health = .unknown
            verdict.targets[index].consecutiveSuccesses = 0
            verdict.targets[index].consecutiveFailures = 0
        }
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
