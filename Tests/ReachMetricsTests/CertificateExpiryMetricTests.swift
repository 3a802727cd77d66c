import ReachCore
import ReachMetrics
import ReachSupport
import ReachTesting
import Testing

/// `reachd_target_certificate_expiry_timestamp_seconds{target}`: set from probe results that carry
/// a certificate, only for targets that presented one, gone with the target on reload.
@Suite("Metrics: certificate expiry")
struct CertificateExpiryMetricTests {
    let series = #"reachd_target_certificate_expiry_timestamp_seconds{target="secure"}"#
    let notAfter = WallTime(sinceEpoch: .seconds(1_795_917_209))

    static func https(_ name: String) -> ProbeTarget {
        ProbeTarget(
            name: name,
            check: .http(
                HTTPCheck(url: "https://203.0.113.10/healthz", endpoint: HostPort(host: "203.0.113.10", port: 443))
            )
        )
    }

    func presenting(_ target: String, failure: ProbeFailure? = nil) -> ProbeResult {
        ProbeResult(
            target: target,
            failure: failure,
            timings: ProbeTimings(total: .milliseconds(4)),
            certificate: ServerCertificate(notAfter: notAfter, subject: "CN=api.test", issuer: "CN=Test CA")
        )
    }

    private func scrape(_ metrics: ReachMetrics, _ harness: MonitorHarness) -> String {
        String(decoding: metrics.exposition(monitor: harness.monitor), as: UTF8.self)
    }

    @Test func theExpiryOfWhatATargetPresentedIsKeptWhileItIsAway() async throws {
        let harness = MonitorHarness(targets: [Self.https("secure"), .http("plain")])
        let metrics = ReachMetrics(targets: harness.targets)
        #expect(sample(scrape(metrics, harness), series) == nil, "no series before a certificate was seen")

        metrics.probeFinished(.http("plain"), result: .ok("plain"))
        metrics.probeFinished(Self.https("secure"), result: presenting("secure"))
        var text = scrape(metrics, harness)
        #expect(sample(text, series) == 1_795_917_209)
        #expect(
            sample(text, #"reachd_target_certificate_expiry_timestamp_seconds{target="plain"}"#) == nil,
            "plain HTTP presents none"
        )
        #expect(text.contains("# TYPE reachd_target_certificate_expiry_timestamp_seconds gauge"))

        // Expired and refused at the handshake: still presented. Then the server is away: kept.
        metrics.probeFinished(
            Self.https("secure"),
            result: presenting(
                "secure",
                failure: ProbeFailure(.tlsFailure, phase: .tls, detail: "certificate has expired")
            )
        )
        metrics.probeFinished(Self.https("secure"), result: .refused("secure"))
        text = scrape(metrics, harness)
        #expect(sample(text, series) == 1_795_917_209)
        if Promtool.path != nil {
            let (status, output) = try await Promtool.checkMetrics(text)
            #expect(status == 0 && output.isEmpty, "promtool says:\n\(output)")
        }
        await harness.stop()
    }

    @Test func aReloadThatRemovesTheTargetOrItsTLSRemovesTheSeries() async {
        let harness = MonitorHarness(targets: [Self.https("secure"), Self.https("other")])
        let metrics = ReachMetrics(targets: harness.targets)
        metrics.probeFinished(Self.https("secure"), result: presenting("secure"))
        metrics.probeFinished(Self.https("other"), result: presenting("other"))

        metrics.reconfigure(targets: [Self.https("other"), .http("secure")], interfaces: InterfaceFilter())
        var text = scrape(metrics, harness)
        #expect(sample(text, series) == nil, "secure is plain HTTP now: no certificate to expire")
        #expect(sample(text, #"reachd_target_certificate_expiry_timestamp_seconds{target="other"}"#) == 1_795_917_209)

        metrics.reconfigure(targets: [Self.https("secure")], interfaces: InterfaceFilter())
        metrics.probeFinished(Self.https("other"), result: presenting("other"))
        text = scrape(metrics, harness)
        #expect(
            sample(text, #"reachd_target_certificate_expiry_timestamp_seconds{target="other"}"#) == nil,
            "removed, and a late result makes none"
        )
        await harness.stop()
    }
}
