import Logging
import ReachSupport

/// The one place each event kind is logged.
extension ConnectivityMonitor {
    func log(_ publication: Publication?) {
        guard let publication else { return }
        let (event, change, previous) = (publication.event, publication.change, publication.previous)
        let verdict = event.verdict
        if let move = change.targetMove {
            let down = move.health == .unhealthy
            let status = verdict.targets.first { $0.name == move.target }
            var metadata = (down ? ReachLogEvent.targetDown : .targetUp).metadata
            metadata["target"] = "\(move.target)"
            if down, let reason = status?.unhealthyReason { metadata["reason"] = "\(reason.code)" }
            if let latency = status?.lastResult?.latency { metadata["latency_ms"] = "\(latency.milliseconds)" }
            if let result = status?.lastResult { metadata.merge(result.kindMetadata) { _, new in new } }
            if down, let from = status?.lastFailure?.reportedBy { metadata["reported_by"] = "\(from)" }
            let detail =
                down
                ? ": \(status?.lastFailure.map { "\($0.reason)" + ($0.detail.map { " (\($0))" } ?? "") } ?? "failed")"
                : ""
            logger.log(
                level: down ? .warning : .notice,
                "target \(move.target) \(down ? "down" : "up")\(detail)",
                metadata: metadata
            )
        }
        let level: Logger.Level =
            if !change.isHeadline {
                .debug
            } else {
                switch verdict.state {
                case .disconnected: .warning
                case .connected: .notice
                case .unknown: .info
                }
            }
        var metadata = verdict.logMetadata(sequence: event.sequence)
        metadata["previous_state"] = "\(previous.state.rawValue)"
        let kind: ReachLogEvent? =
            switch change.transition {
            case .restored: .connectivityRestored
            case .lost: .connectivityLost
            // The first link snapshot at start-up is a finding, not a change.
            case nil:
                previous.state != .unknown && verdict.usableInterfaces != previous.usableInterfaces ? .linkChanged : nil
            }
        if let kind { metadata.merge(kind.metadata) { _, new in new } }
        logger.log(level: level, "\(verdict.state.rawValue): \(verdict.reason)", metadata: metadata)
        if change.qualityChanged { logQuality(verdict, previous: previous.quality) }
        if change.isHeadline, let portal = verdict.portal {
            var metadata = ReachLogEvent.captivePortal.metadata
            metadata["portal_url"] = "\(portal.userPortalURL ?? "")"
            metadata["portal_evidence"] = "\(portal.evidence.rawValue)"
            if let interface = portal.interface { metadata["interface"] = "\(interface)" }
            logger.warning(
                "captive portal: sign in at \(portal.userPortalURL ?? "the network's login page")",
                metadata: metadata
            )
        }
    }
}

extension ConnectivityMonitor {
    /// The `quality_changed` entry: impaired (a warning, with where and how bad), good again
    /// after `previous` was impaired, or good when first judged. A connected verdict that loses
    /// its quality by going disconnected says so in its own entry.
    func logQuality(_ verdict: Verdict, previous: QualityState?) {
        guard let quality = verdict.quality else { return }
        var metadata = ReachLogEvent.qualityChanged.metadata
        metadata["quality"] = "\(quality.state.rawValue)"
        guard quality.state == .impaired else {
            let again = previous == .impaired ? " again" : ""
            logger.notice("connection quality good\(again)", metadata: metadata)
            return
        }
        if let fault = quality.fault { metadata["quality_fault"] = "\(fault.code)" }
        if let target = quality.target { metadata["quality_target"] = "\(target)" }
        metadata["quality_exceeded"] = "\(quality.exceeded.map(\.measure.rawValue).joined(separator: ","))"
        if let first = quality.exceeded.first {
            metadata["quality_value"] = "\(first.loggedValue(first.value))"
            metadata["quality_budget"] = "\(first.loggedValue(first.budget))"
        }
        logger.warning("connection impaired: \(quality.headline)", metadata: metadata)
    }
}

extension QualityFinding {
    /// Milliseconds for latency and jitter, percent for loss, rounded.
    func loggedValue(_ value: Double) -> Int {
        Int((value * (measure == .loss ? 100 : 1000)).rounded())
    }
}

extension VerdictQuality {
    /// `server (target api): latency 412 ms (budget 300 ms)`: where, and how bad.
    package var headline: String {
        let place = (fault?.code ?? "server") + (target.map { " (target \($0))" } ?? "")
        let measures = exceeded.map { finding in
            let unit = finding.measure == .loss ? " %" : " ms"
            return "\(finding.measure.rawValue) \(finding.loggedValue(finding.value))\(unit)"
                + " (budget \(finding.loggedValue(finding.budget))\(unit))"
        }
        return "\(place): \(measures.joined(separator: ", "))"
    }
}

extension ProbeResult {
    /// What a `dns` or `icmp` probe adds to a target's log entry: `resolver` (`REACHD_RESOLVER`),
    /// and `echoes_sent`, `echoes_received`, `rtt_median_ms`.
    var kindMetadata: Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        if let resolver { metadata["resolver"] = "\(resolver)" }
        if let echoes {
            metadata["echoes_sent"] = "\(echoes.sent)"
            metadata["echoes_received"] = "\(echoes.received)"
            if let median = echoes.median { metadata["rtt_median_ms"] = "\(median.milliseconds)" }
        }
        return metadata
    }
}

extension Verdict {
    /// Stable log fields describing the verdict.
    func logMetadata(sequence: UInt64) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "state": "\(state.rawValue)",
            "reason": "\(reason.code)",
            "sequence": "\(sequence)",
            "interfaces": "\(usableInterfaces.joined(separator: ","))",
        ]
        if let target = reason.target { metadata["target"] = "\(target)" }
        // `REACHD_FAULT` in the journal: where the path breaks.
        if let fault { metadata["fault"] = "\(fault.code)" }
        if case .targetFailed(_, .httpStatus(let status)) = reason { metadata["http_status"] = "\(status)" }
        return metadata
    }
}
