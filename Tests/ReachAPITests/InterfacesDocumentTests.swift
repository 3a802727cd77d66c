import Foundation
import ReachAPI
import ReachCore
import ReachSupport
import Testing

/// Each uplink and each family in the status document: written with every key, read back the same.
@Suite("Status document: uplinks and families")
struct InterfacesDocumentTests {
    @Test func uplinksAndDegradedFamiliesAreWrittenAndReadBack() throws {
        var target = TargetStatus(name: "api", kind: "http", health: .healthy)
        (target.families, target.answeredFamilies, target.degradedFamilies) = ([.ipv4, .ipv6], [.ipv4], [.ipv6])
        var verdict = Verdict(
            state: .connected,
            reason: .healthy,
            since: WallTime(sinceEpoch: .seconds(1_800_000_000)),
            targets: [target]
        )
        verdict.interfaces = [
            InterfaceReachability(name: "eth0", reachable: false, reason: .timeout, fault: .server),
            InterfaceReachability(name: "wwan0", reachable: true, latency: .milliseconds(41)),
            InterfaceReachability(name: "wlan0"),
        ]
        let document = StatusDocument(event: ConnectivityEvent(sequence: 3, verdict: verdict), likelyConnected: true)
        #expect(document.degradedFamilies == ["ipv6"])
        #expect(document.reachableInterfaces == ["wwan0"])
        let json = String(decoding: APIJSON.encode(document), as: UTF8.self)
        #expect(
            json.contains(
                #""interfaces":[{"fault":"server","latency_seconds":null,"name":"eth0","reachable":false,"reason":"timeout"}"#
            )
        )
        #expect(
            json.contains(#"{"fault":null,"latency_seconds":null,"name":"wlan0","reachable":null,"reason":null}"#),
            "unknown is null, not missing"
        )
        #expect(json.contains(#""answered_families":["ipv4"],"#))
        let read = try APIJSON.decode(StatusDocument.self, from: Array(json.utf8))
        #expect(read == document)
        #expect(read.verdict.interfaces.map(\.reachable) == [false, true, nil])
        #expect(read.verdict.interfaces.map(\.fault) == [.server, nil, nil])
        #expect(read.verdict.degradedFamilies == [.ipv6])
    }

    @Test func withoutUplinksOrFamiliesBothAreEmpty() {
        let document = StatusDocument(
            event: ConnectivityEvent(
                sequence: 1,
                verdict: Verdict(state: .connected, reason: .healthy, since: WallTime(sinceEpoch: .zero))
            ),
            likelyConnected: true
        )
        #expect(document.interfaces.isEmpty)
        #expect(document.degradedFamilies.isEmpty)
    }
}
