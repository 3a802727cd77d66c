import Logging
import ReachCore
import ReachSupport
import Synchronization

/// Warns in the journal while a target's certificate expires within `tls.warn_before`: once a day
/// per target, from the probes' results (``CertificateExpiryWarnings`` decides when).
///
/// The warning carries the `certificate_expiring` event (its own `MESSAGE_ID`) and the fields the
/// catalog entry names: `REACHD_TARGET`, `REACHD_CERT_NOT_AFTER`, `REACHD_CERT_SUBJECT`,
/// `REACHD_CERT_ISSUER`. A result without a certificate (plain HTTP, TCP, a refused connection)
/// costs one comparison.
final class CertificateExpiryWarner: ProbeObserver {
    private let warnings: Mutex<CertificateExpiryWarnings>
    private let clock: MonitorClock
    private let logger: Logger

    init(window: Duration, clock: MonitorClock, logger: Logger) {
        self.warnings = Mutex(CertificateExpiryWarnings(window: window))
        self.clock = clock
        self.logger = logger
    }

    func probeFinished(_ target: ProbeTarget, result: ProbeResult) {
        guard let certificate = result.certificate else { return }
        let now = clock.wallTime
        guard warnings.withLock({ $0.shouldWarn(target: target.name, certificate: certificate, now: now) }) else {
            return
        }
        let notAfter = RFC3339.string(from: certificate.notAfter)
        var metadata = ReachLogEvent.certificateExpiring.metadata
        metadata["target"] = "\(target.name)"
        metadata["cert_not_after"] = "\(notAfter)"
        metadata["cert_subject"] = "\(certificate.subject)"
        metadata["cert_issuer"] = "\(certificate.issuer)"
        // "expires in 3 days", "expired 2 days ago"
        let when = (certificate.notAfter > now ? "expires " : "expired ") + certificate.expiry(relativeTo: now)
        logger.warning(
            "the TLS certificate of target \(target.name) \(when), at \(notAfter) (\(certificate.subject), issued by \(certificate.issuer))",
            metadata: metadata
        )
    }
}
