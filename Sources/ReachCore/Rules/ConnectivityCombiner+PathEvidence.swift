import ReachSupport

/// The path-evidence half of the combining rules (see ``ConnectivityCombiner``): the gateway and upstream
/// evidence that place a target's silence on the gateway, the internet connection or the server
/// (``Fault/init(_:evidence:)``).
extension ConnectivityCombiner {
    /// Takes a round of path evidence; `nil` forgets it (no target fails without an answer any more).
    mutating func apply(pathEvidence round: PathEvidenceRound?, at now: WallTime) -> Change {
        guard round != pathEvidence else { return Change(accepted: false) }
        pathEvidence = round
        return settle(control: probeControl, at: now)
    }

    /// Where the path breaks for a failure of `reason`'s target, from the reason, the target's kind
    /// and the evidence (``Fault/init(_:evidence:)``, ``Fault/of(_:kind:)``).
    func fault(for reason: VerdictReason) -> Fault? {
        let kind = reason.target.flatMap { indexByName[$0] }.map { targets[$0].kind } ?? ""
        return Fault.of(Fault(reason, evidence: evidence(for: reason)), kind: kind)
    }

    /// The evidence that places a failure of `reason`'s target: none needed for a target on
    /// loopback (no network path to find), else the last round, `nil` until one is done.
    func evidence(for reason: VerdictReason) -> PathEvidenceRound? {
        guard let name = reason.target, let index = indexByName[name], targets[index].endpoint.isLoopback else {
            return pathEvidence
        }
        return PathEvidenceRound()
    }
}
