import Foundation
import Hummingbird
import HummingbirdTesting
import ReachAPI
import ReachCore
import ReachServer
import ReachSupport
import ReachTesting
import Testing

@Suite("Status API: POST /v1/check")
struct ImmediateCheckTests {
    /// Stands in for the probe scheduler: answers every immediate-probe request with `result`
    /// after `delay`, one millisecond of wall time later.
    private func prober(_ harness: MonitorHarness, delay: Duration, result: ProbeResult) -> Task<Void, Never> {
        let seen = harness.monitor.currentProbeControl.immediateProbeRequests
        let controls = harness.monitor.probeControl()
        return Task {
            var handled = seen
            for await control in controls where control.immediateProbeRequests > handled {
                handled = control.immediateProbeRequests
                // The stand-in probe's deliberate duration, not synchronisation.
                guard (try? await Task.sleep(for: delay)) != nil else { return }
                harness.clock.advance(by: .milliseconds(1))
                harness.record(result)
            }
        }
    }

    @Test func answersOnceEveryTargetHasAFreshResult() async throws {
        let harness = MonitorHarness()
        harness.connect()
        let before = StatusDocument(event: harness.monitor.current, likelyConnected: true).targets[0].lastCheckedAt
        let prober = prober(harness, delay: .milliseconds(300), result: .ok("server", ms: 7))
        try await harness.server(checkWaitLimit: .seconds(20)).makeApplication().test(.live) { client in
            let started = ContinuousClock.now
            try await client.execute(uri: "/v1/check", method: .post) { response in
                let elapsed = ContinuousClock.now - started
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                #expect(elapsed >= .milliseconds(300), "it waited for the probe")
                #expect(elapsed < .seconds(10), "and not for the limit")
                let object = try jsonObject(response.body)
                #expect(object["state"] as? String == "connected")
                let target = try #require((object["targets"] as? [[String: Any]])?.first)
                #expect(target["last_checked_at"] as? String != before)
                #expect(target["latency_seconds"] as? Double == 0.007)
                #expect(target["consecutive_successes"] as? Int == 2)
            }
        }
        prober.cancel()
        await harness.stop()
    }

    @Test func aFailingProbeChangesTheAnswer() async throws {
        let harness = MonitorHarness()
        harness.connect()
        let prober = prober(harness, delay: .milliseconds(50), result: .refused("server"))
        try await harness.server().makeApplication().test(.live) { client in
            try await client.execute(uri: "/v1/check", method: .post) { response in
                let object = try jsonObject(response.body)
                #expect(object["state"] as? String == "disconnected")
                #expect(object["reason"] as? String == "connection_refused")
            }
        }
        prober.cancel()
        await harness.stop()
    }

    @Test func withoutAProberItAnswersAtTheLimit() async throws {
        let harness = MonitorHarness()
        harness.connect()
        let requestsBefore = harness.monitor.currentProbeControl.immediateProbeRequests
        try await harness.server(checkWaitLimit: .milliseconds(300)).makeApplication().test(.live) { client in
            let started = ContinuousClock.now
            try await client.execute(uri: "/v1/check", method: .post) { response in
                let elapsed = ContinuousClock.now - started
                #expect(response.status == .ok)
                #expect(elapsed >= .milliseconds(300))
                #expect(elapsed < .seconds(10), "it gives up at the limit rather than hang")
                let value = try jsonObject(response.body)["state"] as? String
                #expect(value == "connected")
            }
        }
        #expect(
            harness.monitor.currentProbeControl.immediateProbeRequests == requestsBefore + 1,
            "the check asked for a probe"
        )
        await harness.stop()
    }

    @Test func whileProbingIsSuspendedItAnswersAtOnce() async throws {
        let harness = MonitorHarness()
        harness.monitor.update(links: .offline)
        try await harness.server(checkWaitLimit: .seconds(20)).makeApplication().test(.live) { client in
            let started = ContinuousClock.now
            try await client.execute(uri: "/v1/check", method: .post) { response in
                #expect(ContinuousClock.now - started < .seconds(10), "at once, not at the 20 s limit")
                let value = try jsonObject(response.body)["reason"] as? String
                #expect(value == "no_link")
            }
        }
        await harness.stop()
    }
}
