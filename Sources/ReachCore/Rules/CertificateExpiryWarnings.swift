import ReachSupport

/// Decides when to warn that a target's certificate expires soon: once a day per target while
/// its chain's earliest `notAfter` is within the warning window. Pure: the caller passes the time.
///
/// A renewed certificate (its date back outside the window) ends the warnings and is forgotten,
/// so that the next time one comes close the warning is given at once.
package struct CertificateExpiryWarnings: Sendable {
    /// How long before the expiry warnings start (`tls.warn_before`); zero warns never.
    package let window: Duration
    /// How long after a warning the next one is due: a day, as for a person reading the journal.
    package static let repeatAfter = Duration.seconds(86_400)
    /// When each target was last warned about.
    private var warnedAt: [String: WallTime] = [:]

    package init(window: Duration) {
        self.window = window
    }

    /// Whether to warn now about the certificate `target` presented, and if so, notes the warning.
    package mutating func shouldWarn(target: String, certificate: ServerCertificate, now: WallTime) -> Bool {
        guard window > .zero, certificate.notAfter.sinceEpoch - now.sinceEpoch < window else {
            warnedAt[target] = nil
            return false
        }
        if let last = warnedAt[target], now.sinceEpoch - last.sinceEpoch < Self.repeatAfter { return false }
        warnedAt[target] = now
        return true
    }
}
