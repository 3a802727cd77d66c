import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import ReachCore
import ReachServer
import ReachTesting
import ServiceLifecycle
import Testing

@Suite("Status API: Server-Sent Events")
struct EventStreamTests {
    @Test func theCurrentVerdictComesFirstThenEveryChangeInOrder() async throws {
        let harness = MonitorHarness { $0.linkSettleWindow = .zero }
        harness.connect()
        let connectedSequence = harness.sequence
        try await harness.server().makeApplication().test(.live) { client in
            let port = try #require(client.port)
            let stream = try await EventStreamClient.open("http://localhost:\(port)/v1/events")
            #expect(stream.status == 200)
            #expect(stream.header("content-type") == "text/event-stream")
            #expect(stream.header("cache-control") == "no-cache")
            let first = try await stream.waitForEvents(1)[0]
            #expect(first.id == String(connectedSequence))
            #expect(first.event == "verdict")
            #expect(first.json["state"] as? String == "connected")
            #expect(first.json["sequence"] as? Int == Int(connectedSequence))
            #expect(first.json["reset"] as? Bool == false)

            harness.record(.refused("server"))
            harness.monitor.update(links: .offline)
            harness.monitor.update(links: .of(.usable()))
            harness.record(.ok("server"))
            let events = try await stream.waitForEvents(5)
            #expect(
                events.map(\.id) == (connectedSequence...connectedSequence + 4).map { String($0) },
                "ids are the sequence numbers, in order"
            )
            #expect(
                events.map { $0.json["reason"] as? String } == [
                    "healthy", "connection_refused", "no_link", "awaiting_probe", "healthy",
                ]
            )
            #expect(events.allSatisfy { $0.data?.contains("\n") == false }, "each document is one data line")
            await stream.close()
        }
        await harness.stop()
    }

    @Test func resumingWithLastEventIDGetsOnlyNewerEvents() async throws {
        let harness = MonitorHarness { $0.linkSettleWindow = .zero }
        harness.connect()
        let seen = harness.sequence
        harness.record(.refused("server"))
        harness.monitor.update(links: .offline)
        let latest = harness.sequence
        // Heartbeats every 100 ms: an up-to-date resumed stream beats at once, which shows it idle.
        try await harness.server(heartbeat: .milliseconds(100)).makeApplication().test(.live) { client in
            let port = try #require(client.port)
            let resumed = try await EventStreamClient.open(
                "http://localhost:\(port)/v1/events",
                headers: [("Last-Event-ID", String(seen))]
            )
            let events = try await resumed.waitForEvents(2)
            #expect(events.map(\.id) == [String(seen + 1), String(latest)])
            #expect(events.allSatisfy { $0.json["reset"] as? Bool == false })

            let byQuery = try await EventStreamClient.open(
                "http://localhost:\(port)/v1/events?last_event_id=\(seen + 1)"
            )
            #expect(try await byQuery.waitForEvents(1).map(\.id) == [String(latest)])

            let upToDate = try await EventStreamClient.open(
                "http://localhost:\(port)/v1/events",
                headers: [("Last-Event-ID", String(latest))]
            )
            // The replay, if any, is decided when the request arrives (the subscription is taken
            // before the response head): a heartbeat shows the stream idle with nothing replayed, and
            // the next change, published after the subscription, must be the first event it carries.
            try await waitUntil("a heartbeat on the up-to-date stream") {
                upToDate.messages.contains(where: \.isHeartbeat)
            }
            #expect(upToDate.events.isEmpty, "nothing new: nothing replayed")
            harness.monitor.update(links: .of(.usable()))
            try await upToDate.waitForEvent(id: latest + 1)
            #expect(upToDate.events.map(\.id) == [String(latest + 1)], "nothing replayed before the new event")

            for stream in [resumed, byQuery, upToDate] { await stream.close() }
        }
        await harness.stop()
    }

    @Test func aResumePointOutOfTheHistoryStartsOverWithReset() async throws {
        let harness = MonitorHarness { configuration in
            configuration.linkSettleWindow = .zero
            configuration.historyLimit = 4
        }
        harness.connect()
        for _ in 0..<4 {
            harness.monitor.update(links: .offline)
            harness.monitor.update(links: .of(.usable()))
        }
        let latest = harness.sequence
        try await harness.server().makeApplication().test(.live) { client in
            let port = try #require(client.port)
            for lastEventID in ["1", String(latest + 100)] {
                let stream = try await EventStreamClient.open(
                    "http://localhost:\(port)/v1/events",
                    headers: [("Last-Event-ID", lastEventID)]
                )
                let events = try await stream.waitForEvents(1)
                #expect(events[0].id == String(latest))
                #expect(events[0].json["reset"] as? Bool == true, "resuming after \(lastEventID)")
                await stream.close()
            }
        }
        await harness.stop()
    }

    @Test func idleStreamsCarryHeartbeats() async throws {
        let harness = MonitorHarness()
        try await harness.server(heartbeat: .milliseconds(100)).makeApplication().test(.live) { client in
            let port = try #require(client.port)
            let stream = try await EventStreamClient.open("http://localhost:\(port)/v1/events")
            try await waitUntil("two heartbeats") { stream.messages.count(where: \.isHeartbeat) >= 2 }
            #expect(stream.events.count == 1, "heartbeats are comments, not events")
            #expect(stream.messages.first?.event == "verdict", "the verdict comes before any heartbeat")
            await stream.close()
        }
        await harness.stop()
    }

    @Test func aClientThatNeverReadsHoldsNoOneUp() async throws {
        let harness = MonitorHarness { $0.linkSettleWindow = .zero }
        harness.connect()
        try await harness.server().makeApplication().test(.live) { client in
            let port = try #require(client.port)
            let stuck = try RawSocket(port: port, receiveBuffer: 2048)
            await stuck.send("GET /v1/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let reader = try await EventStreamClient.open("http://localhost:\(port)/v1/events")
            try await waitUntil("both subscribed") { harness.monitor.subscriberCount == 2 }
            let start = harness.sequence

            // Far more than socket buffers hold: the stuck client's writer blocks early on.
            for _ in 0..<2000 {
                harness.monitor.update(links: .offline)
                harness.monitor.update(links: .of(.usable()))
            }
            harness.record(.ok("server"))
            let last = harness.sequence
            #expect(last == start + 4001)

            try await reader.waitForEvent(id: last, timeout: .seconds(60))
            let ids = reader.events.compactMap { $0.id.flatMap(UInt64.init) }
            #expect(ids == ids.sorted() && Set(ids).count == ids.count, "in order, no duplicates, gaps allowed")
            try await client.execute(uri: "/v1/status", method: .get) { response in
                #expect(response.status == .ok)
                let value = try jsonObject(response.body)["sequence"] as? Int
                #expect(value == Int(last))
            }

            // The stuck client, once it reads, skipped ahead: far fewer events than were published,
            // ending with the latest.
            let text = await stuck.read(untilItContains: "id: \(last)\n", timeout: .seconds(30))
            // Split on bytes: "\r\n" (chunk framing) is one Character, so a String split on "\n" misses it.
            let lines = text.utf8.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
            let stuckIDs = lines.filter { $0.hasPrefix("id: ") }.compactMap { UInt64($0.dropFirst(4)) }
            #expect(stuckIDs.last == last, "read \(text.utf8.count) bytes")
            #expect(stuckIDs.count < 4000, "received \(stuckIDs.count) of 4002 events")
            #expect(stuckIDs == stuckIDs.sorted())
            await reader.close()
        }
        await harness.stop()
    }

    @Test func gracefulShutdownEndsTheStreamCleanly() async throws {
        let harness = MonitorHarness()
        let directory = try TemporaryDirectory("sse")
        let socket = "\(directory)/status.sock"
        let app = harness.server(address: .unixSocket(socket)).makeApplication()
        let group = ServiceGroup(services: [app], logger: .quiet)
        let running = Task { try await group.run() }
        try await waitUntil("the socket exists") { FileManager.default.fileExists(atPath: socket) }

        let url = try #require(URL(httpURLWithSocketPath: socket, uri: "/v1/events")).absoluteString
        let stream = try await EventStreamClient.open(url)
        try await stream.waitForEvents(1)
        try await waitUntil("subscribed") { harness.monitor.subscriberCount == 1 }

        let started = ContinuousClock.now
        await group.triggerGracefulShutdown()
        try await stream.waitForEnd(timeout: .seconds(10))
        #expect(stream.error == nil, "the body ended with a proper end of message")
        try await running.value
        #expect(
            ContinuousClock.now - started < .seconds(10),
            "a graceful stop does not wait out a heartbeat or a drain timeout"
        )
        try await waitUntil("unsubscribed") { harness.monitor.subscriberCount == 0 }
        await harness.stop()
    }

    @Test func stoppingTheMonitorEndsTheStream() async throws {
        let harness = MonitorHarness()
        try await harness.server().makeApplication().test(.live) { client in
            let port = try #require(client.port)
            let stream = try await EventStreamClient.open("http://localhost:\(port)/v1/events")
            try await stream.waitForEvents(1)
            await harness.stop()
            try await stream.waitForEnd()
            #expect(stream.error == nil)
        }
    }
}
