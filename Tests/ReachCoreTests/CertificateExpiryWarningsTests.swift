import ReachCore
import ReachSupport
import Testing

/// When reachd warns that a certificate expires soon, on synthetic times: once a day per target
/// while it is within `tls.warn_before`, never once it is renewed.
@Suite struct CertificateExpiryWarningsTests {
    let start = WallTime(sinceEpoch: .seconds(1_795_000_000))
    let day = Duration.seconds(86_400)

    /// Asks outside the `#expect` macro, which cannot hold a mutating call.
    func warn(
        _ warnings: inout CertificateExpiryWarnings,
        target: String,
        certificate: ServerCertificate,
        now: WallTime
    ) -> Bool {
        warnings.shouldWarn(target: target, certificate: certificate, now: now)
    }

    func certificate(expiringIn duration: Duration, from now: WallTime) -> ServerCertificate {
        ServerCertificate(notAfter: now.advanced(by: duration), subject: "CN=api.test", issuer: "CN=Test CA")
    }

    @Test func warnsOnceADayPerTargetWhileWithinTheWindow() {
        var warnings = CertificateExpiryWarnings(window: day * 14)
        let expiring = certificate(expiringIn: day * 3, from: start)
        #expect(warn(&warnings, target: "api", certificate: expiring, now: start))
        // Every probe of the day after it: no more.
        for minutes in stride(from: 1, to: 24 * 60, by: 7) {
            #expect(
                !warn(&warnings, target: "api", certificate: expiring, now: start.advanced(by: .seconds(60 * minutes)))
            )
        }
        #expect(
            warn(&warnings, target: "other", certificate: expiring, now: start.advanced(by: .seconds(60))),
            "each target on its own"
        )
        #expect(
            warn(&warnings, target: "api", certificate: expiring, now: start.advanced(by: day)),
            "again a day later"
        )
        #expect(!warn(&warnings, target: "api", certificate: expiring, now: start.advanced(by: day + .seconds(1))))
        #expect(
            warn(&warnings, target: "api", certificate: expiring, now: start.advanced(by: day * 4)),
            "and after it expired"
        )
    }

    @Test func aCertificateOutsideTheWindowOrARenewedOneIsNotWarnedAbout() {
        var warnings = CertificateExpiryWarnings(window: day * 14)
        #expect(
            !warn(&warnings, target: "api", certificate: certificate(expiringIn: day * 15, from: start), now: start)
        )
        #expect(
            warn(
                &warnings,
                target: "api",
                certificate: certificate(expiringIn: day * 14 - .seconds(1), from: start),
                now: start
            )
        )
        // Renewed an hour later: no warning, and the next one that comes close is warned about at once.
        let renewed = certificate(expiringIn: day * 90, from: start)
        for hours in 1...48 {
            #expect(
                !warn(&warnings, target: "api", certificate: renewed, now: start.advanced(by: .seconds(3600 * hours)))
            )
        }
        let later = start.advanced(by: day * 77)
        #expect(warn(&warnings, target: "api", certificate: renewed, now: later), "within 14 days of its expiry")
    }

    @Test func aZeroWindowNeverWarns() {
        var warnings = CertificateExpiryWarnings(window: .zero)
        #expect(
            !warn(&warnings, target: "api", certificate: certificate(expiringIn: .seconds(1), from: start), now: start)
        )
        #expect(
            !warn(&warnings, target: "api", certificate: certificate(expiringIn: .zero - day, from: start), now: start)
        )
    }

    @Test func theExpiryReadsInWholeUnits() {
        let now = start
        #expect(certificate(expiringIn: day * 3 - .seconds(60), from: now).expiry(relativeTo: now) == "in 3 days")
        #expect(certificate(expiringIn: day + .seconds(3600), from: now).expiry(relativeTo: now) == "in 1 day")
        #expect(certificate(expiringIn: .seconds(5 * 3600), from: now).expiry(relativeTo: now) == "in 5 hours")
        #expect(certificate(expiringIn: .seconds(90), from: now).expiry(relativeTo: now) == "in 2 minutes")
        #expect(certificate(expiringIn: .zero - day * 2, from: now).expiry(relativeTo: now) == "2 days ago")
        #expect(certificate(expiringIn: .zero, from: now).expiry(relativeTo: now) == "0 minutes ago")
    }
}
