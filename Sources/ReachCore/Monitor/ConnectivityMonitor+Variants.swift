import Logging
import ReachSupport
import Synchronization

/// The variants of the targets' probes (``ProbeVariant``): which to run, and what they found.
extension ConnectivityMonitor {
    /// Takes a variant's result: an uplink's or a family's finding, which never changes the
    /// verdict's state. Dropped like a target's result when it is stale.
    package func record(_ result: ProbeResult, variant: ProbeVariant, epoch: ProbeEpoch) {
        let (before, index, published) = state.withLock { state in
            let before = state.combiner.verdict
            let index = state.combiner.indexByName[variant.target]
            return (
                before, index, apply(&state) { $0.record(result, variant: variant, epoch: epoch, at: clock.wallTime) }
            )
        }
        if let after = published?.event.verdict {
            switch variant.kind {
            case .interface:
                logUplinks(after.interfaces, before: before.interfaces)
            case .family:
                // Both read under one lock, around a result that leaves the targets as they are.
                if let index { logFamilies(of: after.targets[index], before: before.targets[index]) }
            }
        }
        log(published)
    }

    /// The variants to probe: the current list first, then every change (uplinks come and go, a
    /// reload). The daemon runs them on a scheduler of their own.
    package func variantProbes() -> Subscription<[ProbeTarget]> {
        variantPlans.subscribe()
    }

    /// One line when an uplink's reachability changes, at the level of a target's.
    private func logUplinks(_ interfaces: [InterfaceReachability], before: [InterfaceReachability]) {
        for uplink in interfaces {
            guard let reachable = uplink.reachable, let old = before.first(where: { $0.name == uplink.name }),
                old.reachable != reachable
            else {
                continue
            }
            var metadata: Logger.Metadata = ["interface": "\(uplink.name)", "reachable": "\(reachable)"]
            if let reason = uplink.reason { metadata["reason"] = "\(reason.code)" }
            if let fault = uplink.fault { metadata["fault"] = "\(fault.code)" }
            let detail = uplink.reason.map { ": \($0)" } ?? ""
            logger.log(
                level: reachable ? .notice : .warning,
                "uplink \(uplink.name) \(reachable ? "reaches" : "does not reach") the targets\(detail)",
                metadata: metadata
            )
        }
    }

    /// One line when a target's family stops answering while another answers, and one when it
    /// answers again: Happy Eyeballs hides both from the target's own probes.
    private func logFamilies(of target: TargetStatus, before: TargetStatus) {
        let answered = target.answeredFamilies.map(\.rawValue).joined(separator: ", ")
        for family in target.degradedFamilies where !before.degradedFamilies.contains(family) {
            logger.warning(
                "target \(target.name) does not answer over \(family.rawValue), only over \(answered)",
                metadata: ["target": "\(target.name)", "family": "\(family.rawValue)"]
            )
        }
        for family in before.degradedFamilies where target.answeredFamilies.contains(family) {
            logger.notice(
                "target \(target.name) answers over \(family.rawValue) again",
                metadata: ["target": "\(target.name)", "family": "\(family.rawValue)"]
            )
        }
    }
}
