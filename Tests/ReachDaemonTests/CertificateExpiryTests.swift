import Foundation
import ReachCore
import ReachLogging
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

@testable import ReachAPI

/// A real reachd (beside a journald of the test's own) watching HTTPS servers on loopback whose
/// certificates the test made with openssl: one that expires in three days, one that expired
/// yesterday. What it says about them: the status document, the metric, `reachctl status`, and
/// exactly one journal warning per target however many probes run.
@Suite("Certificates before they expire, from a real reachd", .serialized, .timeLimit(.minutes(3)))
struct CertificateExpiryTests {
    @Test func aCertificateThatExpiresSoonIsInTheStatusTheMetricsReachctlAndTheJournalOnce() async throws {
        let directory = try TemporaryDirectory("certs-daemon")
        let ca = try await PrivateCA.make(in: directory.path)
        let soon = try await ca.issue(name: "api.test", days: 3)
        let old = try await ca.issue(name: "old.test", days: -1)
        let soonServer = try await LoopbackHTTPSServer(certificate: soon)
        let oldServer = try await LoopbackHTTPSServer(certificate: old)
        let soonNotAfter = WallTime(
            sinceEpoch: .seconds(Int64(try await PrivateCA.notAfter(of: soon.certificate).timeIntervalSince1970))
        )
        let oldNotAfter = WallTime(
            sinceEpoch: .seconds(Int64(try await PrivateCA.notAfter(of: old.certificate).timeIntervalSince1970))
        )

        let port = try freeLoopbackPort()
        let config = directory.url.appending(path: "reachd.yaml")
        try """
        listen: 127.0.0.1:\(port)
        probe: { interval: 200ms, timeout: 2s }
        policy: any
        targets:
          - { name: soon, url: "\(soonServer.url)", tls: { ca_file: \(ca.certificate) } }
          - { name: old, url: "\(oldServer.url)", tls: { ca_file: \(ca.certificate) } }
        """.write(to: config, atomically: true, encoding: .utf8)
        let reachd = try await PrivateJournal.reachd(["--config", config.path], listen: nil)
        defer { kill(reachd.pid, SIGKILL) }

        // The journal: one warning per target, with the catalog's fields.
        let warning = ["SYSLOG_IDENTIFIER=reachd", "MESSAGE_ID=\(ReachLogEvent.certificateExpiring.journalMessageID)"]
        let warnings = try await reachd.waitForEntries(warning, count: 2)
        let soonWarning = try #require(warnings.first { $0["REACHD_TARGET"] == "soon" }, "\(warnings)")
        #expect(soonWarning["PRIORITY"] == "4")
        #expect(soonWarning["REACHD_EVENT"] == "certificate_expiring")
        #expect(soonWarning["REACHD_CERT_NOT_AFTER"] == RFC3339.string(from: soonNotAfter))
        #expect(soonWarning["REACHD_CERT_SUBJECT"] == "CN=api.test")
        #expect(soonWarning["REACHD_CERT_ISSUER"] == "CN=reachd test CA")
        #expect(
            soonWarning["MESSAGE"]?.hasPrefix(
                "the TLS certificate of target soon expires in 3 days, at \(RFC3339.string(from: soonNotAfter))"
            ) == true,
            "\(soonWarning)"
        )
        let oldWarning = try #require(warnings.first { $0["REACHD_TARGET"] == "old" })
        #expect(
            oldWarning["MESSAGE"]?.hasPrefix("the TLS certificate of target old expired 1 day ago") == true,
            "\(oldWarning)"
        )

        // The metric, for each target that presented a certificate, expired or not.
        let metrics = try await loopbackGet(port: port, path: StatusAPI.metrics.path)
        #expect(
            sample(metrics.body, #"reachd_target_certificate_expiry_timestamp_seconds{target="soon"}"#)
                == soonNotAfter.secondsSinceEpoch
        )
        #expect(
            sample(metrics.body, #"reachd_target_certificate_expiry_timestamp_seconds{target="old"}"#)
                == oldNotAfter.secondsSinceEpoch
        )

        // The status document: the certificate object, and the expired one a tls_failure with its date.
        let status = try await loopbackGet(port: port, path: StatusAPI.status.path)
        let document = try APIJSON.decode(StatusDocument.self, from: Data(status.body.utf8))
        let soonStatus = try #require(document.targets.first { $0.name == "soon" })
        #expect(soonStatus.health == "healthy")
        #expect(
            soonStatus.certificate
                == StatusDocument.Certificate(
                    notAfter: RFC3339.string(from: soonNotAfter),
                    subject: "CN=api.test",
                    issuer: "CN=reachd test CA"
                )
        )
        let oldStatus = try #require(document.targets.first { $0.name == "old" })
        #expect(oldStatus.reason == "tls_failure")
        #expect(oldStatus.detail == "certificate has expired")
        #expect(oldStatus.certificate?.notAfter == RFC3339.string(from: oldNotAfter))

        // reachctl says when, in days.
        let listing = try await reachctl(["--endpoint", "http://127.0.0.1:\(port)", "status"])
        let lines = listing.output.split(separator: "\n")
        let soonDay = RFC3339.string(from: soonNotAfter).prefix(10)
        #expect(
            lines.contains { $0.contains("soon") && $0.hasSuffix("ms, cert expires \(soonDay) (in 3 days)") },
            "\(listing.output)"
        )
        #expect(
            lines.contains {
                $0.contains("old")
                    && $0.hasSuffix("cert expired \(RFC3339.string(from: oldNotAfter).prefix(10)) (1 day ago)")
            },
            "\(listing.output)"
        )

        // Many probes later, still one warning each: the next is due in a day.
        let probes = #"reachd_probes_total{target="soon",result="success"}"#
        let before = sample(metrics.body, probes) ?? 0
        try await waitUntil("10 more probes of soon", timeout: .seconds(30), every: .milliseconds(50)) {
            (sample(try await loopbackGet(port: port, path: StatusAPI.metrics.path).body, probes) ?? 0) >= before + 10
        }
        #expect(try await reachd.entries(warning).count == 2)
        await soonServer.stop()
        await oldServer.stop()
    }
}
