import Foundation
import ReachAPI
import ReachCore
import ReachSupport
import ReachTesting
import Testing

/// Keeps `Sources/ReachAPI/openapi.yaml` honest: every route and every JSON key the contract's
/// encoder produces is described there, and its example reads back through the contract byte for byte.
@Suite("openapi.yaml matches the code")
struct OpenAPIDocumentTests {
    private static let text: String = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/ReachAPI/openapi.yaml")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// The lines of the block that starts with `header` (at its indentation), up to the next line
    /// at the same or a shallower indentation.
    private func block(_ header: String, in lines: [Substring]) -> [Substring] {
        guard let start = lines.firstIndex(where: { $0 == header }) else { return [] }
        let indent = header.prefix { $0 == " " }.count
        var result: [Substring] = []
        for line in lines[(start + 1)...] {
            let lineIndent = line.prefix { $0 == " " }.count
            if !line.trimmingCharacters(in: .whitespaces).isEmpty, lineIndent <= indent { break }
            result.append(line)
        }
        return result
    }

    @Test func everyRouteAndMethodIsDescribed() throws {
        let lines = Self.text.split(separator: "\n")
        #expect(lines.first == "openapi: 3.0.3")
        for route in StatusAPI.routes {
            let item = block("  \(route.path):", in: lines)
            #expect(!item.isEmpty, "\(route.path) is missing")
            #expect(
                item.contains { $0 == "    \(route.method.lowercased()):" },
                "\(route.method) \(route.path) is missing"
            )
            #expect(
                item.contains { $0 == "      security: []" } == route.isOpen,
                "\(route.path) needs a token unless it is open"
            )
        }
    }

    @Test func everyKeyOfTheStatusDocumentIsInTheSchema() throws {
        let lines = Self.text.split(separator: "\n")
        var target = TargetStatus(
            name: "a",
            kind: "http",
            lastResult: .ok("a"),
            certificate: ServerCertificate(
                notAfter: WallTime(sinceEpoch: .seconds(1_900_000_000)),
                subject: "CN=a",
                issuer: "CN=CA"
            )
        )
        let finding = QualityFinding(measure: .latency, value: 0.4, budget: 0.3)
        target.quality = TargetQuality(state: .impaired, exceeded: [finding], since: WallTime(sinceEpoch: .zero))
        target.qualityBudget = QualityBudget(latency: .milliseconds(300))
        target.qualityMeasures = QualityMeasures(latency: .milliseconds(400), loss: 0, samples: 3)
        let portal = CaptivePortal(
            evidence: .rfc8908,
            isCaptive: false,
            secondsRemaining: 60,
            sessionEndsAt: WallTime(sinceEpoch: .seconds(60))
        )
        var verdict = Verdict(
            state: .connected,
            reason: .healthy,
            since: WallTime(sinceEpoch: .zero),
            targets: [target],
            portal: portal
        )
        verdict.interfaces = [InterfaceReachability(name: "eth0", reachable: false, reason: .timeout, fault: .server)]
        verdict.quality = VerdictQuality(
            state: .impaired,
            fault: .server,
            target: "a",
            exceeded: [finding],
            since: WallTime(sinceEpoch: .zero)
        )
        let event = ConnectivityEvent(sequence: 1, verdict: verdict)
        let data = APIJSON.encode(StatusDocument(event: event, likelyConnected: true))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let targetObject = try #require((object["targets"] as? [[String: Any]])?.first)
        let timings = try #require(targetObject["timings"] as? [String: Any])
        let portalObject = try #require(object["portal"] as? [String: Any])
        let certificate = try #require(targetObject["certificate"] as? [String: Any])
        let interface = try #require((object["interfaces"] as? [[String: Any]])?.first)
        let quality = try #require(object["quality"] as? [String: Any])
        let qualityFinding = try #require((quality["exceeded"] as? [[String: Any]])?.first)
        let targetQuality = try #require(targetObject["quality"] as? [String: Any])
        let window = try #require(targetObject["quality_window"] as? [String: Any])
        let budget = try #require(window["budget"] as? [String: Any])
        for (schema, keys) in [
            ("StatusDocument", object.keys), ("TargetStatus", targetObject.keys), ("Timings", timings.keys),
            ("CaptivePortal", portalObject.keys),
            ("Certificate", certificate.keys), ("InterfaceReachability", interface.keys),
            ("Quality", quality.keys), ("QualityFinding", qualityFinding.keys), ("TargetQuality", targetQuality.keys),
            ("QualityWindow", window.keys), ("QualityBudget", budget.keys),
        ] {
            let properties = block("      properties:", in: block("    \(schema):", in: lines))
            let described = Set(
                properties.filter { $0.hasPrefix("        ") && !$0.hasPrefix("         ") }.map {
                    $0.trimmingCharacters(in: .whitespaces).dropLast()
                }
            )
            #expect(described == Set(keys.map { Substring($0) }), "\(schema) properties")
        }
    }

    @Test func everyKeyOfTheHistoryDocumentIsInTheSchema() throws {
        let lines = Self.text.split(separator: "\n")
        let document = HistoryDocument(
            since: "2027-01-15T08:00:00.000Z",
            until: "2027-01-16T08:00:00.000Z",
            transitions: [
                .init(
                    at: "2027-01-15T09:00:00.000Z",
                    state: "disconnected",
                    reason: "timeout",
                    fault: "server",
                    target: "api"
                )
            ],
            outages: [
                .init(
                    start: "2027-01-15T09:00:00.000Z",
                    end: nil,
                    durationSeconds: 1,
                    reason: "timeout",
                    fault: "server",
                    target: "api"
                )
            ],
            gaps: [.init(start: "2027-01-15T08:00:00.000Z", end: nil)],
            uptime: .init(ratio: nil, connectedSeconds: 0, disconnectedSeconds: 0, unknownSeconds: 0),
            minutes: [
                .init(
                    target: "api",
                    start: "2027-01-15T09:00:00.000Z",
                    probes: 1,
                    failures: [:],
                    latencyP50Seconds: nil,
                    latencyP99Seconds: nil
                )
            ]
        )
        let object = try #require(try JSONSerialization.jsonObject(with: APIJSON.encode(document)) as? [String: Any])
        func first(_ key: String) throws -> [String: Any] { try #require((object[key] as? [[String: Any]])?.first) }
        for (schema, keys) in [
            ("HistoryDocument", object.keys), ("HistoryTransition", try first("transitions").keys),
            ("HistoryOutage", try first("outages").keys),
            ("HistoryGap", try first("gaps").keys),
            ("HistoryUptime", try #require(object["uptime"] as? [String: Any]).keys),
            ("HistoryMinute", try first("minutes").keys),
        ] {
            let properties = block("      properties:", in: block("    \(schema):", in: lines))
            let described = Set(
                properties.filter { $0.hasPrefix("        ") && !$0.hasPrefix("         ") }.map {
                    $0.trimmingCharacters(in: .whitespaces).dropLast()
                }
            )
            #expect(described == Set(keys.map { Substring($0) }), "\(schema) properties")
        }
    }

    @Test func theErrorAndLivenessDocumentsAreTheSchemas() throws {
        let lines = Self.text.split(separator: "\n")
        for (schema, document) in [("Error", APIJSON.encode(APIErrorDocument(error: "x")))] {
            let object = try #require(try JSONSerialization.jsonObject(with: document) as? [String: Any])
            let properties = block("      properties:", in: block("    \(schema):", in: lines))
            let described = Set(
                properties.filter { $0.hasPrefix("        ") && !$0.hasPrefix("         ") }.map {
                    $0.trimmingCharacters(in: .whitespaces).dropLast()
                }
            )
            #expect(described == Set(object.keys.map { Substring($0) }), "\(schema) properties")
        }
        #expect(String(decoding: APIJSON.encode(LivenessDocument.ok), as: UTF8.self) == #"{"status":"ok"}"#)
        #expect(block("  /healthz:", in: lines).contains("                    enum: [ok]"))
    }

    @Test func theEventExampleIsWhatTheContractWrites() throws {
        let example = try #require(Self.text.split(separator: "\n").first { $0.hasPrefix("                data: {") })
        let data = String(example.dropFirst("                data: ".count))
        let document = try APIJSON.decode(StatusDocument.self, from: data.utf8)
        #expect(
            String(decoding: APIJSON.encode(document), as: UTF8.self) == data,
            "the example is byte for byte what the encoder writes"
        )
        var parser = EventStreamParser()
        let events = try parser.feed(document.eventFrame)
        #expect(events == [ServerSentEvent(id: "\(document.sequence)", event: ServerSentEvent.verdictType, data: data)])
    }
}
