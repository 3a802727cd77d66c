import Hummingbird
import HummingbirdTesting
import ReachCore
import ReachMetrics
import ReachServer
import ReachTesting
import Testing

@Suite("GET /metrics")
struct MetricsRouteTests {
    @Test func metricsRouteServesTheExpositionAndChangesAfterATransition() async throws {
        let harness = MonitorHarness()
        let metrics = ReachMetrics(targets: harness.targets)
        let follower = Task { await metrics.follow(harness.monitor) }
        try await waitUntil("the follower subscribed") { harness.monitor.subscriberCount == 1 }
        try await harness.server(metrics: metrics).makeApplication().test(.router) { client in
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
                #expect(sample(String(buffer: response.body), "reachd_connected") == 0)
            }
            harness.connect()
            try await waitUntil("connected in metrics") {
                sample(
                    String(decoding: metrics.exposition(monitor: harness.monitor), as: UTF8.self),
                    "reachd_connected"
                ) == 1
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(sample(String(buffer: response.body), "reachd_connected") == 1)
            }
        }
        follower.cancel()
        await follower.value
        await harness.stop()
    }
}
