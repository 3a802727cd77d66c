import ReachSupport

/// The captive-portal half of the combining rules (see ``ConnectivityCombiner``): which evidence
/// names a portal, strongest first.
extension ConnectivityCombiner {
    /// Takes the RFC 8908 API's answer for `interface`; `nil` when it has none (no API advertised,
    /// or it could not be asked), which leaves the decision to the other evidence.
    mutating func apply(portalAPI answer: CaptivePortalAPIAnswer?, interface: String, at now: WallTime) -> Change {
        guard portalAPIAnswers[interface]?.answer != answer else { return Change(accepted: false) }
        portalAPIAnswers[interface] = answer.map { (answer: $0, at: now) }
        return settle(control: probeControl, at: now)
    }

    /// The portal the network itself shows: its RFC 8908 API (on usable interfaces, in index order;
    /// a captive answer first, else a signed-in session it tells of), else the intercepted check
    /// URL, named more precisely when the first failing target is HTTPS and failed its certificate
    /// check (the portal answered its handshake).
    func networkPortal(failing outcome: PolicyOutcome) -> CaptivePortal? {
        if !portalAPIAnswers.isEmpty {
            let order = assessment?.usableInterfaces ?? []
            let interfaces = portalAPIAnswers.keys.sorted {
                (order.firstIndex(of: $0) ?? .max, $0) < (order.firstIndex(of: $1) ?? .max, $1)
            }
            let captive = interfaces.first(where: { portalAPIAnswers[$0]?.answer.isCaptive == true })
            let session = interfaces.first(where: {
                portalAPIAnswers[$0].map { $0.answer.userPortalURL != nil || $0.answer.secondsRemaining != nil } == true
            })
            guard let interface = captive ?? session, let entry = portalAPIAnswers[interface] else { return nil }
            let (answer, answeredAt) = (entry.answer, entry.at)
            return CaptivePortal(
                evidence: .rfc8908,
                isCaptive: answer.isCaptive,
                userPortalURL: answer.userPortalURL,
                venueInfoURL: answer.venueInfoURL,
                secondsRemaining: answer.secondsRemaining,
                bytesRemaining: answer.bytesRemaining,
                sessionEndsAt: answer.secondsRemaining.map {
                    WallTime(sinceEpoch: answeredAt.sinceEpoch + .seconds($0))
                },
                interface: interface.isEmpty ? nil : interface
            )
        }
        guard case .intercepted(let signInURL) = portalCheckFinding else { return nil }
        var evidence = CaptivePortal.Evidence.checkURL
        if case .failed(let index) = outcome, case .http(let check) = targets[index].check, check.isHTTPS,
            verdict.targets[index].unhealthyReason == .tlsFailure
        {
            evidence = .tlsIntercepted
        }
        return CaptivePortal(evidence: evidence, userPortalURL: signInURL)
    }

    /// A portal told by the failing target itself: its plain-HTTP probe was redirected to another
    /// host (a server's own redirect, to another path of the same host, is not one).
    func redirectPortal(_ status: TargetStatus, of target: ProbeTarget) -> CaptivePortal? {
        guard case .http(let check) = target.check, !check.isHTTPS,
            case .httpStatus(300...399)? = status.unhealthyReason,
            let location = status.lastFailure?.location, let signIn = HTTPURL(check.url)?.resolving(location),
            signIn.host.lowercased() != check.endpoint.host.lowercased()
        else { return nil }
        return CaptivePortal(evidence: .redirect, userPortalURL: signIn.text)
    }

    /// Whether `reason` is a failure a portal between here and the server can cause (its login
    /// page's status or body, its certificate on an HTTPS target's handshake, a connection it cut
    /// as it came, or one it resets instead of intercepting) while no check URL
    /// probe that began after the target went down has answered: then whose fault it is, the
    /// server's or the portal's, is not known yet, and is not guessed (the check URL's next result
    /// tells, within a probe interval). A check that began before the failure, and ended after it,
    /// may have crossed the network before a portal came: it does not tell (a loaded machine
    /// stretched such a check past the failure of a target the portal intercepted, and the fault
    /// read `server` for a moment). A wall clock set back since the failure does not hold the fault back.
    func awaitsPortalCheck(_ reason: VerdictReason, at now: WallTime) -> Bool {
        guard portalCheck != nil, case .targetFailed(let name, let failure) = reason,
            let failed = failedAt[name], failed <= now
        else { return false }
        switch failure {
        case .tlsFailure, .httpStatus, .unexpectedBody, .connectionReset:
            return portalCheckStarted.map { $0 < failed } ?? true
        default: return false
        }
    }
}
