import ReachCore
import ReachSupport

extension StatusDocument {
    /// Describes a published event.
    ///
    /// - Parameters:
    ///   - event: The event, from ``ReachCore/ConnectivityMonitor/current`` or a subscription.
    ///   - likelyConnected: ``ReachCore/ConnectivityMonitor/isLikelyConnected``, read when the document is built.
    package init(event: ConnectivityEvent, likelyConnected: Bool, version: String = ReachVersion.current) {
        let verdict = event.verdict
        self.init(
            state: verdict.state.rawValue,
            reason: verdict.reason.code,
            reasonDetail: verdict.reasonDetail,
            target: verdict.reason.target,
            fault: verdict.fault?.code,
            since: RFC3339.string(from: verdict.since),
            likelyConnected: likelyConnected,
            sequence: event.sequence,
            reset: event.isReset,
            version: version,
            usableInterfaces: verdict.usableInterfaces,
            targets: verdict.targets.map(Target.init(status:)),
            portal: verdict.portal.map(Portal.init(portal:)),
            interfaces: verdict.interfaces.map(Interface.init(reachability:)),
            degradedFamilies: verdict.degradedFamilies.map(\.rawValue),
            quality: verdict.quality.map(Quality.init)
        )
    }

    /// The described verdict's reason, read from the codes and the structured target: a code this
    /// version does not know reads as the target's `protocol_error`.
    package var verdictReason: VerdictReason {
        if let own = VerdictReason(ownCode: reason) { return own }
        let failure = FailureReason(code: reason, httpStatus: failingTarget?.httpStatus) ?? .protocolError
        return .targetFailed(target: target ?? "", reason: failure)
    }

    /// The entry of the target the reason is about, when the reason is a target's failure.
    package var failingTarget: Target? {
        guard let target else { return nil }
        return targets.first { $0.name == target }
    }

    /// The verdict the document describes, as far as the document tells it: each target's name,
    /// kind, health and the failure that holds it down; no probe timings.
    package var verdict: Verdict {
        let targets = targets.map { target in
            var status = TargetStatus(
                name: target.name,
                kind: target.kind,
                health: TargetHealth(rawValue: target.health) ?? .unknown
            )
            status.certificate = target.certificate.flatMap(\.serverCertificate)
            status.families = target.families.compactMap(IPFamily.init(rawValue:))
            status.answeredFamilies = target.answeredFamilies.compactMap(IPFamily.init(rawValue:))
            status.degradedFamilies = target.degradedFamilies.compactMap(IPFamily.init(rawValue:))
            if let host = target.host { status.endpoint = HostPort(host: host, port: target.port ?? 0) }
            status.quality = target.quality?.targetQuality
            if let code = target.reason {
                status.lastFailure = ProbeFailure(
                    FailureReason(code: code, httpStatus: target.httpStatus) ?? .protocolError,
                    phase: target.phase.flatMap(ProbePhase.init(rawValue:)),
                    detail: target.detail
                )
                status.lastFailure?.reportedBy = target.reportedBy.flatMap { IPAddress($0) }
            }
            return status
        }
        var verdict = Verdict(
            state: ConnectivityState(rawValue: state) ?? .unknown,
            reason: verdictReason,
            since: RFC3339.wallTime(from: since) ?? WallTime(sinceEpoch: .zero),
            usableInterfaces: usableInterfaces,
            targets: targets,
            portal: portal?.captivePortal,
            fault: fault.flatMap(Fault.init(rawValue:))
        )
        verdict.interfaces = interfaces.map(\.reachability)
        verdict.quality = quality?.verdictQuality
        return verdict
    }
}

extension StatusDocument.Portal {
    init(portal: CaptivePortal) {
        self.init(
            captive: portal.isCaptive,
            userPortalURL: portal.userPortalURL,
            venueInfoURL: portal.venueInfoURL,
            secondsRemaining: portal.secondsRemaining,
            bytesRemaining: portal.bytesRemaining,
            sessionEndsAt: portal.sessionEndsAt.map(RFC3339.string(from:)),
            evidence: portal.evidence.rawValue,
            interface: portal.interface
        )
    }

    /// The portal described; evidence this version does not know reads as `check_url`, the weakest a person acts on alike.
    var captivePortal: CaptivePortal {
        CaptivePortal(
            evidence: CaptivePortal.Evidence(rawValue: evidence) ?? .checkURL,
            isCaptive: captive,
            userPortalURL: userPortalURL,
            venueInfoURL: venueInfoURL,
            secondsRemaining: secondsRemaining,
            bytesRemaining: bytesRemaining,
            sessionEndsAt: sessionEndsAt.flatMap(RFC3339.wallTime(from:)),
            interface: interface
        )
    }
}

extension StatusDocument.Certificate {
    init(certificate: ServerCertificate) {
        self.init(
            notAfter: RFC3339.string(from: certificate.notAfter),
            subject: certificate.subject,
            issuer: certificate.issuer
        )
    }

    var serverCertificate: ServerCertificate? {
        RFC3339.wallTime(from: notAfter).map { ServerCertificate(notAfter: $0, subject: subject, issuer: issuer) }
    }
}

extension StatusDocument.Target {
    init(status: TargetStatus) {
        // The last probe's failure; after a success, the failure that damping still holds the target down for.
        let failure = status.lastResult?.failure ?? (status.health == .unhealthy ? status.lastFailure : nil)
        let timings = status.lastResult?.timings
        let httpStatus: Int? = if case .httpStatus(let code) = failure?.reason { code } else { nil }
        self.init(
            name: status.name,
            kind: status.kind,
            health: status.health.rawValue,
            reason: failure?.reason.code,
            phase: failure?.phase?.rawValue,
            detail: failure.map { $0.detail ?? $0.reason.words.clause },
            httpStatus: httpStatus,
            latencySeconds: status.lastResult?.latency.seconds,
            timings: StatusDocument.Timings(
                dnsSeconds: timings?.dns?.seconds,
                connectSeconds: timings?.connect?.seconds,
                tlsSeconds: timings?.tls?.seconds,
                firstByteSeconds: timings?.firstByte?.seconds,
                totalSeconds: timings?.total.seconds
            ),
            lastCheckedAt: status.lastCheckedAt.map(RFC3339.string(from:)),
            consecutiveFailures: status.consecutiveFailures,
            consecutiveSuccesses: status.consecutiveSuccesses,
            certificate: status.certificate.map(StatusDocument.Certificate.init(certificate:)),
            families: status.families.map(\.rawValue),
            answeredFamilies: status.answeredFamilies.map(\.rawValue),
            degradedFamilies: status.degradedFamilies.map(\.rawValue),
            resolver: status.lastResult?.resolver.map { "\($0)" },
            reportedBy: failure?.reportedBy.map { "\($0)" },
            echoes: status.lastResult?.echoes.map(StatusDocument.Echoes.init(statistics:)),
            host: status.probedAt?.host,
            port: status.probedAt.flatMap { $0.port == 0 ? nil : $0.port },
            quality: status.quality.map(StatusDocument.TargetQuality.init),
            qualityWindow: StatusDocument.QualityWindow(measures: status.qualityMeasures, budget: status.qualityBudget)
        )
    }
}

extension TargetStatus {
    /// Where the target is probed, for `host` and `port`: `nil` for a `dns` target that asks this
    /// host's resolvers (no one place); an `icmp` target's port is 0, which `port` leaves out.
    fileprivate var probedAt: HostPort? { endpoint.flatMap { $0.host.isEmpty ? nil : $0 } }
}

extension Verdict {
    /// The reason in words, for `reason_detail`: for a target's failure, the target, the failure, and
    /// where and how it failed.
    var reasonDetail: String {
        if reason == .captivePortal, let url = portal?.userPortalURL {
            return "\(reason.words.clause): sign in at \(url)"
        }
        guard case .targetFailed(let target, let failureReason) = reason else { return reason.words.clause }
        var text = "target \(target): \(failureReason.words.clause)"
        if let failure = targets.first(where: { $0.name == target })?.lastFailure, failure.reason == failureReason {
            if let phase = failure.phase { text += " (in the \(phase.rawValue) phase)" }
            if let detail = failure.detail, !detail.isEmpty { text += ": \(detail)" }
        }
        return text
    }
}
