import Foundation
import ReachCore
import ReachSupport
import ReachTesting
import Testing

@testable import ReachAPI

@Suite("StatusDocument: the JSON contract")
struct StatusDocumentTests {
    private func json(_ document: StatusDocument) throws -> [String: Any] {
        let data = APIJSON.encode(document)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// GLib's can_reach() through the GIO module asks about a host and port: each target says
    /// where it is probed, an IPv6 address without brackets, and a reader gets it back.
    @Test(
        arguments: [
            (ProbeTarget(name: "api", check: .tcp(HostPort(host: "2001:db8::5", port: 8443))), "2001:db8::5", 8443),
            // A resolver is probed at its address and port; an echo has no port.
            (
                ProbeTarget(
                    name: "ns",
                    check: .dns(DNSCheck(query: "a.test", server: HostPort(host: "10.0.0.53", port: 53)))
                ), "10.0.0.53", 53
            ),
            (ProbeTarget(name: "ping", check: .icmp(ICMPCheck(host: "10.0.0.1"))), "10.0.0.1", nil),
            // Asking this host's resolvers, in turn: no one place.
            (ProbeTarget(name: "names", check: .dns(DNSCheck(query: "a.test"))), nil, nil),
        ] as [(ProbeTarget, String?, Int?)]
    )
    func eachTargetSaysWhereItIsProbed(probed: ProbeTarget, host: String?, port: Int?) throws {
        var status = TargetStatus(target: probed)
        status.health = .unhealthy
        let verdict = Verdict(
            state: .connected,
            reason: .healthy,
            since: TestClock().wallTimeAtStart,
            targets: [status]
        )
        let document = StatusDocument(event: ConnectivityEvent(sequence: 1, verdict: verdict), likelyConnected: true)
        let target = try #require((try json(document)["targets"] as? [[String: Any]])?.first)
        #expect(target["host"] as? String == host && (target["host"] is NSNull) == (host == nil))
        #expect(target["port"] as? Int == port && (target["port"] is NSNull) == (port == nil))
        let decoded = try JSONDecoder().decode(StatusDocument.self, from: APIJSON.encode(document))
        #expect(decoded.verdict.targets.first?.endpoint == host.map { HostPort(host: $0, port: port ?? 0) })
    }

    @Test func aConnectedVerdictHasEveryKeyInSnakeCase() throws {
        let clock = TestClock()
        let verdict = Verdict(
            state: .connected,
            reason: .healthy,
            since: clock.wallTimeAtStart,
            usableInterfaces: ["eth0"],
            targets: [
                TargetStatus(
                    name: "server",
                    kind: "http",
                    health: .healthy,
                    lastResult: ProbeResult(
                        target: "server",
                        timings: ProbeTimings(
                            dns: .milliseconds(1),
                            connect: .milliseconds(2),
                            tls: nil,
                            firstByte: .milliseconds(4),
                            total: .milliseconds(5)
                        )
                    ),
                    lastCheckedAt: clock.wallTimeAtStart.advanced(by: .milliseconds(1500)),
                    consecutiveSuccesses: 3
                )
            ]
        )
        let object = try json(
            StatusDocument(event: ConnectivityEvent(sequence: 7, verdict: verdict), likelyConnected: true)
        )
        #expect(
            Set(object.keys)
                == [
                    "state", "reason", "reason_detail", "target", "fault", "since", "likely_connected", "sequence",
                    "reset", "version",
                    "usable_interfaces", "targets", "portal", "interfaces", "degraded_families", "quality",
                ]
        )
        #expect(object["state"] as? String == "connected")
        #expect(object["reason"] as? String == "healthy")
        #expect(object["since"] as? String == "2027-01-15T08:00:00.000Z")
        #expect(object["likely_connected"] as? Bool == true)
        #expect(object["sequence"] as? Int == 7)
        #expect(object["reset"] as? Bool == false)
        #expect(object["version"] as? String == ReachVersion.current)
        #expect(object["usable_interfaces"] as? [String] == ["eth0"])
        let target = try #require((object["targets"] as? [[String: Any]])?.first)
        #expect(
            Set(target.keys)
                == [
                    "name", "kind", "health", "reason", "phase", "detail", "http_status", "latency_seconds", "timings",
                    "last_checked_at",
                    "consecutive_failures", "consecutive_successes", "certificate", "families", "answered_families",
                    "degraded_families", "resolver", "reported_by", "echoes", "host", "port", "quality",
                    "quality_window",
                ]
        )
        #expect(target["host"] is NSNull && target["port"] is NSNull, "a status made without its target: where unknown")
        #expect(target["name"] as? String == "server")
        #expect(target["kind"] as? String == "http")
        #expect(target["health"] as? String == "healthy")
        #expect(target["reason"] is NSNull, "unknown values are null, not missing")
        #expect(target["phase"] is NSNull)
        #expect(target["detail"] is NSNull)
        #expect(target["latency_seconds"] as? Double == 0.005)
        #expect(target["last_checked_at"] as? String == "2027-01-15T08:00:01.500Z")
        #expect(target["consecutive_successes"] as? Int == 3)
        #expect(target["consecutive_failures"] as? Int == 0)
        let timings = try #require(target["timings"] as? [String: Any])
        #expect(
            Set(timings.keys) == [
                "dns_seconds", "connect_seconds", "tls_seconds", "first_byte_seconds", "total_seconds",
            ]
        )
        #expect(timings["dns_seconds"] as? Double == 0.001)
        #expect(timings["connect_seconds"] as? Double == 0.002)
        #expect(timings["tls_seconds"] is NSNull)
        #expect(timings["first_byte_seconds"] as? Double == 0.004)
        #expect(timings["total_seconds"] as? Double == 0.005)
    }

    @Test func aDocumentFromAnOlderReachdWithoutTheNewerKeysReads() throws {
        // As reachd 0.1.0 wrote it before `fault`, the uplinks and the families.
        let older = #"""
            {"likely_connected":true,"portal":null,"reason":"healthy","reason_detail":"the targets answer","reset":false,"sequence":42,
             "since":"2027-01-15T08:00:00.000Z","state":"connected","target":null,"usable_interfaces":["eth0"],"version":"0.1.0",
             "targets":[{"name":"api","kind":"http","health":"healthy","reason":null,"phase":null,"detail":null,"http_status":null,
             "latency_seconds":0.004,"timings":{"dns_seconds":null,"connect_seconds":null,"tls_seconds":null,"first_byte_seconds":null,
             "total_seconds":0.004},"last_checked_at":null,"consecutive_failures":0,"consecutive_successes":3,"certificate":null}]}
            """#
        let document = try APIJSON.decode(StatusDocument.self, from: Array(older.utf8))
        #expect(document.fault == nil)
        #expect(document.interfaces.isEmpty && document.degradedFamilies.isEmpty)
        #expect(document.targets.map(\.name) == ["api"] && document.targets[0].families.isEmpty)
        #expect(
            document.quality == nil && document.targets[0].quality == nil && document.targets[0].qualityWindow == nil
        )
    }

    @Test func anImpairedConnectionSaysWhereAndHowBadInTheHeadline() throws {
        let since = WallTime(sinceEpoch: .seconds(1_800_000_000))
        var verdict = Verdict(state: .connected, reason: .healthy, since: since)
        let latency = QualityFinding(measure: .latency, value: 0.412, budget: 0.3)
        let loss = QualityFinding(measure: .loss, value: 0.125, budget: 0.05)
        let cases: [(Fault, String, [QualityFinding], String)] = [
            (.server, "server", [latency], "connected, slow: server 412 ms (budget 300 ms)"),
            (
                .server, "api", [latency, loss],
                "connected, slow and lossy: api 412 ms (budget 300 ms), 12.5 % lost (budget 5 %)"
            ),
            (.gateway, "router", [loss], "connected, lossy: gateway (target router) 12.5 % lost (budget 5 %)"),
        ]
        for (fault, target, exceeded, headline) in cases {
            verdict.quality = VerdictQuality(
                state: .impaired,
                fault: fault,
                target: target,
                exceeded: exceeded,
                since: since
            )
            let document = StatusDocument(
                event: ConnectivityEvent(sequence: 1, verdict: verdict),
                likelyConnected: true
            )
            #expect(document.headline == headline)
            let read = try APIJSON.decode(StatusDocument.self, from: Array(APIJSON.encode(document)))
            #expect(read.verdict.quality == verdict.quality, "the quality reads back as it was")
        }
        verdict.quality = VerdictQuality(state: .good, since: since)
        let good = StatusDocument(event: ConnectivityEvent(sequence: 1, verdict: verdict), likelyConnected: true)
        #expect(good.headline == "connected (healthy)")
        #expect(good.factValues.first { $0.fact.key == "quality.state" }?.codes == ["good"])
    }

    @Test func aFailedTargetNamesItsReasonPhaseAndDetail() async throws {
        let harness = MonitorHarness()
        harness.monitor.update(links: .of(.usable()))
        harness.record(
            .failure(
                "server",
                .httpStatus(503),
                phase: .head,
                detail: "HTTP 503 Service Unavailable",
                latency: .milliseconds(12)
            )
        )
        let document = StatusDocument(
            event: harness.monitor.current,
            likelyConnected: harness.monitor.isLikelyConnected
        )
        #expect(document.state == "disconnected")
        #expect(document.reason == "http_status")
        #expect(
            document.reasonDetail
                == "target server: unexpected HTTP status 503 (in the head phase): HTTP 503 Service Unavailable"
        )
        #expect(!document.likelyConnected)
        let target = try #require(document.targets.first)
        #expect(target.health == "unhealthy")
        #expect(target.reason == "http_status")
        #expect(target.phase == "head")
        #expect(target.detail == "HTTP 503 Service Unavailable")
        #expect(target.latencySeconds == 0.012)
        #expect(target.consecutiveFailures == 1)
        await harness.stop()
    }

    @Test func aFailureWithoutDetailIsDescribedInWords() async throws {
        let harness = MonitorHarness()
        harness.record(.refused("server"))
        let document = StatusDocument(event: harness.monitor.current, likelyConnected: false)
        #expect(document.reason == "connection_refused")
        #expect(document.reasonDetail == "target server: connection refused (in the connect phase)")
        #expect(document.targets.first?.detail == "connection refused")
        await harness.stop()
    }

    @Test func linkReasonsAndTheStartAreExplained() async throws {
        let harness = MonitorHarness()
        var document = StatusDocument(event: harness.monitor.current, likelyConnected: false)
        #expect(document.state == "unknown")
        #expect(document.reason == "starting")
        #expect(document.sequence == 1)
        #expect(document.targets.first?.health == "unknown")
        #expect(document.targets.first?.lastCheckedAt == nil)
        #expect(document.targets.first?.timings == StatusDocument.Timings())
        harness.monitor.update(links: .offline)
        document = StatusDocument(event: harness.monitor.current, likelyConnected: false)
        #expect(document.state == "disconnected")
        #expect(document.reason == "no_link")
        #expect(document.reasonDetail == "no network interface is up with carrier")
        #expect(document.usableInterfaces.isEmpty)
        await harness.stop()
    }

    @Test func aResetEventSaysSo() throws {
        let event = ConnectivityEvent(
            sequence: 9,
            verdict: Verdict(state: .unknown, reason: .starting, since: WallTime(sinceEpoch: .zero)),
            isReset: true
        )
        let object = try json(StatusDocument(event: event, likelyConnected: false))
        #expect(object["reset"] as? Bool == true)
        #expect(object["since"] as? String == "1970-01-01T00:00:00.000Z")
    }

    @Test func decodingRoundTrips() throws {
        let event = ConnectivityEvent(
            sequence: 3,
            verdict: Verdict(
                state: .disconnected,
                reason: .targetFailed(target: "a", reason: .timeout),
                since: WallTime(sinceEpoch: .seconds(1)),
                targets: [
                    TargetStatus(
                        name: "a",
                        kind: "tcp",
                        health: .unhealthy,
                        lastResult: .failure("a", .timeout, phase: .connect, latency: .seconds(2))
                    )
                ]
            )
        )
        let document = StatusDocument(event: event, likelyConnected: false)
        let decoded = try APIJSON.decode(StatusDocument.self, from: APIJSON.encode(document))
        #expect(decoded == document)
    }

    @Test func theFailingTargetIsStructuredSoNobodyReadsTheWords() async throws {
        let harness = MonitorHarness(targets: [.http("backup"), .http("server")])
        harness.monitor.update(links: .of(.usable()))
        harness.record(.ok("backup"))
        harness.record(
            .failure(
                "server",
                .httpStatus(503),
                phase: .head,
                detail: "HTTP 503 Service Unavailable",
                latency: .milliseconds(12)
            )
        )
        let document = StatusDocument(event: harness.monitor.current, likelyConnected: false)
        #expect(document.target == "server")
        #expect(document.failingTarget?.httpStatus == 503)
        #expect(try json(document)["target"] as? String == "server")
        #expect(document.verdictReason == .targetFailed(target: "server", reason: .httpStatus(503)))
        #expect(document.headline == "disconnected: http_status (target server)")
        harness.monitor.update(links: .offline)
        let offline = StatusDocument(event: harness.monitor.current, likelyConnected: false)
        #expect(offline.target == nil)
        #expect(try json(offline)["target"] is NSNull, "null when the reason is the link's, never missing")
        #expect(offline.verdictReason == .noLink)
        #expect(offline.headline == "disconnected: no_link")
        await harness.stop()
    }

    @Test func aDocumentReadsBackAsTheVerdictItDescribes() throws {
        let failure = ProbeResult.failure(
            "a",
            .httpStatus(502),
            phase: .head,
            detail: "HTTP 502 Bad Gateway",
            latency: .seconds(1)
        )
        let verdict = Verdict(
            state: .disconnected,
            reason: .targetFailed(target: "a", reason: .httpStatus(502)),
            since: WallTime(sinceEpoch: .milliseconds(1_500)),
            usableInterfaces: ["eth0"],
            targets: [
                TargetStatus(
                    name: "a",
                    kind: "http",
                    health: .unhealthy,
                    lastResult: failure,
                    lastFailure: failure.failure
                ),
                TargetStatus(name: "b", kind: "tcp", health: .healthy, lastResult: .ok("b")),
            ]
        )
        let document = try APIJSON.decode(
            StatusDocument.self,
            from: APIJSON.encode(
                StatusDocument(event: ConnectivityEvent(sequence: 4, verdict: verdict), likelyConnected: false)
            )
        )
        let read = document.verdict
        #expect(read.state == verdict.state)
        #expect(read.reason == verdict.reason)
        #expect(read.since == verdict.since)
        #expect(read.usableInterfaces == ["eth0"])
        #expect(read.targets.map(\.name) == ["a", "b"])
        #expect(read.targets.map(\.health) == [.unhealthy, .healthy])
        #expect(read.targets[0].lastFailure == failure.failure)
        #expect(read.targets[1].lastFailure == nil)
    }

    @Test func aReasonFromANewerReachdReadsAsTheTargetsProtocolError() throws {
        var document = StatusDocument(
            state: "disconnected",
            reason: "captive_portal_of_the_future",
            reasonDetail: "",
            target: "server",
            since: "1970-01-01T00:00:00.000Z",
            likelyConnected: false,
            sequence: 1
        )
        #expect(document.verdictReason == .targetFailed(target: "server", reason: .protocolError))
        document.reason = "no_route"
        #expect(document.verdictReason == .noRoute)
    }
}
