import ReachConfig
import ReachCore

/// What applying a configuration to a running engine changed (``ConnectivityEngine/apply(_:)``),
/// what of it takes effect only when the engine is made again, and the check-wait limit now in force.
///
/// The engine applies targets, the policy, the interface filter, the settle window, the variants
/// and the captive portal's check URL while it runs, without ending a subscription. The rest of
/// the captive-portal settings, the certificate warning and the upstream reference are set up
/// once: a change there is reported, so that the log says a restart is needed rather than
/// pretending it happened.
package struct ConfigurationChange: Sendable, Equatable {
    package var addedTargets: [String] = []
    package var removedTargets: [String] = []
    /// Targets whose definition (URL, interval, expectations, …) changed; they start again from `unknown`.
    package var changedTargets: [String] = []
    /// Keys of the configuration file whose new value takes effect only at the next start.
    package var needsRestart: [String] = []
    /// Whether the probe scheduler must be rebuilt: the target list or order changed.
    package var targetsChanged: Bool
    /// Whether anything that is applied live changed.
    package var appliesLive: Bool
    /// How long an immediate check (`POST /v1/check`, `checkNow()`) waits for the new targets'
    /// results: ``ReachCore/ImmediateCheck/waitLimit(for:)``.
    package var checkWaitLimit: Duration

    package init(from old: Configuration, to new: Configuration) {
        let before = Dictionary(old.targets.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Set(new.targets.map(\.name))
        for target in new.targets {
            switch before[target.name] {
            case nil: addedTargets.append(target.name)
            case let previous? where previous != target: changedTargets.append(target.name)
            default: break
            }
        }
        removedTargets = old.targets.map(\.name).filter { !after.contains($0) }
        targetsChanged = old.targets != new.targets || old.captivePortal.check != new.captivePortal.check
        appliesLive =
            targetsChanged || old.policy != new.policy || old.interfaces != new.interfaces
            || old.linkSettleWindow != new.linkSettleWindow || old.variants != new.variants
        if old.captivePortal.withoutCheck != new.captivePortal.withoutCheck { needsRestart.append("captive_portal") }
        if old.certificateWarning != new.certificateWarning { needsRestart.append("tls.warn_before") }
        if old.upstream != new.upstream { needsRestart.append("upstream.check") }
        checkWaitLimit = ImmediateCheck.waitLimit(for: new.targets)
    }

    /// `targets +1 -0 ~2 (added: b; changed: a, c)`, for the reload's log line.
    package var summary: String {
        var parts = ["targets +\(addedTargets.count) -\(removedTargets.count) ~\(changedTargets.count)"]
        var names: [String] = []
        if !addedTargets.isEmpty { names.append("added: \(addedTargets.joined(separator: ", "))") }
        if !removedTargets.isEmpty { names.append("removed: \(removedTargets.joined(separator: ", "))") }
        if !changedTargets.isEmpty { names.append("changed: \(changedTargets.joined(separator: ", "))") }
        if !names.isEmpty { parts[0] += " (\(names.joined(separator: "; ")))" }
        if !needsRestart.isEmpty { parts.append("restart needed for: \(needsRestart.joined(separator: ", "))") }
        return parts.joined(separator: "; ")
    }
}
