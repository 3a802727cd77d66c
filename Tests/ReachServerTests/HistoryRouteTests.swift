import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ReachServer
import ReachTesting
import Testing

@Suite("Status API: /v1/history")
struct HistoryRouteTests {
    @Test func theWindowAndTargetReachTheHistoryAndTheDocumentComesBack() async throws {
        let harness = MonitorHarness()
        harness.connect()
        try await harness.server().makeApplication().test(.router) { client in
            try await client.execute(
                uri: "/v1/history?since=2027-01-15T08:00:00Z&until=2027-01-15T09:00:00Z&target=api",
                method: .get
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                let object = try jsonObject(response.body)
                #expect(object["since"] as? String == "2027-01-15T08:00:00.000Z")
                #expect(object["until"] as? String == "2027-01-15T09:00:00.000Z")
                #expect(object["target"] as? String == "api")
                let uptime = try #require(object["uptime"] as? [String: Any])
                #expect(uptime["disconnected_seconds"] as? Double == 1)
                #expect(abs((uptime["ratio"] as? Double ?? 0) - 3599.0 / 3600.0) < 1e-9)
            }
        }
        await harness.stop()
    }

    @Test(arguments: [
        "since=yesterday", "until=soon", "since=2027-01-15T10:00:00Z&until=2027-01-15T09:00:00Z", "target=",
    ])
    func aBadParameterIs400WithTheErrorDocument(query: String) async throws {
        let harness = MonitorHarness()
        try await harness.server().makeApplication().test(.router) { client in
            try await client.execute(uri: "/v1/history?\(query)", method: .get) { response in
                #expect(response.status == .badRequest)
                let object = try jsonObject(response.body)
                #expect(object["error"] is String)
            }
        }
        await harness.stop()
    }

    @Test func withoutHistoryTheAnswerIs503() async throws {
        let harness = MonitorHarness()
        try await harness.server(history: nil).makeApplication().test(.router) { client in
            try await client.execute(uri: "/v1/history", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                let object = try jsonObject(response.body)
                #expect(object["error"] as? String == "history is off (history.enabled: false)")
            }
        }
        await harness.stop()
    }
}
