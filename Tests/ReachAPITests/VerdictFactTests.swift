import Foundation
import ReachCore
import ReachSupport
import Testing

@testable import ReachAPI

/// The facts every rendering shows beside the verdict's state and reason, read by key: the page's
/// script reads each event's JSON by the key, the page and reachctl read the document by the
/// fact's codes; both must read the same.
@Suite("The verdict's facts")
struct VerdictFactTests {
    private func document(degraded: Bool) -> StatusDocument {
        var verdict = Verdict(
            state: .disconnected,
            reason: .targetFailed(target: "api", reason: .connectionRefused),
            since: WallTime(sinceEpoch: .seconds(1_800_000_000)),
            targets: [TargetStatus(name: "api", kind: "http", health: .unhealthy)],
            fault: .server
        )
        if degraded {
            verdict.targets[0].families = [.ipv4, .ipv6]
            verdict.targets[0].degradedFamilies = [.ipv6]
            verdict.quality = VerdictQuality(state: .impaired, fault: .server, target: "api", since: verdict.since)
        }
        return StatusDocument(event: ConnectivityEvent(sequence: 7, verdict: verdict), likelyConnected: false)
    }

    /// The JSON at `key`, as the script makes codes of it.
    private func codes(at key: String, in document: StatusDocument) throws -> [String] {
        let json = try #require(try JSONSerialization.jsonObject(with: APIJSON.encode(document)) as? [String: Any])
        var value: Any = json
        for part in key.split(separator: ".") {
            if value is NSNull { break }
            let object = try #require(value as? [String: Any], "\(key): not an object at \(part)")
            value = try #require(object[String(part)], "the document has no key \(key)")
        }
        if value is NSNull { return [] }
        if let list = value as? [Any] { return list.map { "\($0)" } }
        return ["\(value)"]
    }

    @Test func eachFactReadsTheKeyItNames() throws {
        for degraded in [false, true] {
            let document = document(degraded: degraded)
            for (fact, codes) in document.factValues {
                #expect(codes == (try self.codes(at: fact.key, in: document)), "\(fact.key)")
            }
        }
        let values = Dictionary(
            uniqueKeysWithValues: document(degraded: true).factValues.map { ($0.fact.key, $0.codes) }
        )
        #expect(
            values == [
                "target": ["api"], "fault": ["server"], "quality.state": ["impaired"], "degraded_families": ["ipv6"],
            ]
        )
    }

    @Test func aFactReadsAsItsWordsOnThePageAndAsCodeAndWordsInTheSummary() throws {
        let fault = try #require(StatusDocument.facts.first { $0.key == "fault" })
        #expect(fault.text(["server"]) == "The server is not responding — your network is fine.")
        #expect(fault.text(["sunspots"]) == "sunspots", "a code this version does not know reads as itself")
        #expect(
            fault.summaryLine(["server"]) == "fault:      server — The server is not responding — your network is fine."
        )
        let families = try #require(StatusDocument.facts.first { $0.key == "degraded_families" })
        #expect(families.id == "families")
        #expect(families.text(["ipv4", "ipv6"]) == "IPv4, IPv6")
        #expect(StatusDocument.facts.filter(\.inSummary).map(\.key) == ["fault", "quality.state"])
    }
}
