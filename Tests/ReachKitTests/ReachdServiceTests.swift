import Foundation
import Logging
import ReachCore
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

@testable import ReachKit

extension ReachKitProcessTests {
    /// The reachd-backed service against a real reachd started by the test, watching a real server.
    @Suite("The reachd-backed service", .serialized)
    struct ReachdServiceTests {
        static let quickReconnect = ReachdService.Settings(
            reconnect: ReconnectBackoff(first: .milliseconds(100), longest: .milliseconds(500), jitter: true)
        )

        @Test func aServerGoingDownAndUpGivesExactlyOneLostAndOneRestoredCallback() async throws {
            let directory = try TemporaryDirectory("updown")
            let healthPort = try freeLoopbackPort()
            var server = try await HealthServer(port: healthPort)
            let reachd = try await LocalReachd(
                watchingPort: healthPort,
                port: try freeLoopbackPort(),
                directory: directory
            )
            var settings = Self.quickReconnect
            settings.likelyConnectedWindow = .seconds(1)
            let service = ReachdService(
                endpoint: ReachdEndpoint(base: reachd.endpoint),
                settings: settings,
                logger: .quiet
            )
            let lost = Collected<ServiceTransition>()
            let restored = Collected<ServiceTransition>()
            service.onConnectivityLost(named: "pause-uploads") { lost.append($0) }
            service.onConnectivityRestored(named: "warm-cache") { restored.append($0) }
            let running = Task { try await service.run() }
            defer { running.cancel() }

            try await waitUntil("connected", timeout: .seconds(30)) { service.isConnected }
            #expect(service.isLikelyConnected)
            // Past the window since the last event (a steady verdict sends none; the evidence is
            // refreshed every half window): only evidence refreshed from /v1/status keeps it likely.
            try await waitUntil("four refreshes", timeout: .seconds(20)) { service.evidenceRefreshes >= 4 }
            #expect(service.isLikelyConnected, "likely connected on refreshed evidence")

            await server.stop()
            try await waitUntil("disconnected", timeout: .seconds(30)) { service.current.state == .disconnected }
            #expect(service.current.reason.code == "connection_refused")
            #expect(!service.isLikelyConnected)
            server = try await HealthServer(port: healthPort)
            try await waitUntil("connected again", timeout: .seconds(30)) { service.isConnected }
            try await waitUntil("the restored callback ran") { restored.count >= 1 }
            // Steadily connected since: two refreshes later, still one callback each.
            let refreshes = service.evidenceRefreshes
            try await waitUntil("two more refreshes", timeout: .seconds(10)) {
                service.evidenceRefreshes >= refreshes + 2
            }
            #expect(
                lost.count == 1 && restored.count == 1,
                "one callback per transition: \(lost.all.count) lost, \(restored.all.count) restored"
            )
            #expect(lost.all.first?.verdict.reason.code == "connection_refused")
            #expect((lost.all.first?.sequence ?? .max) < (restored.all.first?.sequence ?? 0))
            await reachd.kill()
            await server.stop()
        }

        @Test func reachdKilledMidStreamIsReportedAsUnreachableThenResumedWithAReset() async throws {
            let directory = try TemporaryDirectory("restart")
            let healthPort = try freeLoopbackPort()
            let server = try await HealthServer(port: healthPort)
            let port = try freeLoopbackPort()
            var reachd = try await LocalReachd(watchingPort: healthPort, port: port, directory: directory)
            let logs = CapturedLogs()
            let service = ReachdService(
                endpoint: ReachdEndpoint(base: reachd.endpoint),
                settings: Self.quickReconnect,
                logger: logs.logger
            )
            let transitions = Collected<ServiceTransition>()
            service.onConnectivityLost { transitions.append($0) }
            service.onConnectivityRestored { transitions.append($0) }
            let seen = Collected<ServiceVerdict>()
            let running = Task { try await service.run() }
            defer { running.cancel() }
            let watching = Task { for await verdict in service.verdicts() { seen.append(verdict) } }
            defer { watching.cancel() }
            try await waitUntil("connected", timeout: .seconds(30)) { service.isConnected }
            try await waitUntil("the stream consumer caught up") { seen.all.last?.isConnected == true }
            let beforeKill = seen.count

            await reachd.kill()
            try await waitUntil("reachd reported unreachable", timeout: .seconds(10)) {
                service.current.reason.code == "reachd_unreachable"
            }
            #expect(!service.isConnected && !service.isLikelyConnected)
            #expect(service.current.state == .unknown)
            // Three tries to reconnect, each refused: still never a stale connected.
            try await waitUntil("three reconnection attempts", timeout: .seconds(10)) {
                logs.all.count { $0.message.hasPrefix("reachd unreachable: trying again") } >= 3
            }
            // What reachd sent before it died may still arrive (a verdict whose details changed):
            // from the first verdict that tells of the loss on, never a connected one.
            let whileDown = seen.all.dropFirst(beforeKill).drop { $0.isConnected }
            #expect(
                !whileDown.isEmpty && !whileDown.contains { $0.isConnected },
                "never a stale connected while reachd is down: \(seen.all.map { "\($0.state.rawValue) \($0.reason)" })"
            )

            reachd = try await LocalReachd(watchingPort: healthPort, port: port, directory: directory)
            try await waitUntil("connected through the new reachd", timeout: .seconds(30)) { service.isConnected }
            #expect(
                logs.all.contains { $0.message.contains("reset") },
                "the old event id is unknown to the new reachd: it sends a reset"
            )
            // The verdict that came through the new reachd was decided no transition (nothing for a callback to run on).
            #expect(
                !logs.all.contains { $0.message.hasPrefix("transition ") },
                "connected before and after: a restart of reachd is no transition"
            )
            #expect(transitions.count == 0)
            await reachd.kill()
            await server.stop()
        }

        @Test func checkNowAnswersWithReachdsVerdictAndThrowsWhenReachdIsGone() async throws {
            let directory = try TemporaryDirectory("check")
            let healthPort = try freeLoopbackPort()
            let server = try await HealthServer(port: healthPort)
            let reachd = try await LocalReachd(
                watchingPort: healthPort,
                port: try freeLoopbackPort(),
                directory: directory
            )
            let service = ReachdService(
                endpoint: ReachdEndpoint(base: reachd.endpoint),
                settings: Self.quickReconnect,
                logger: .quiet
            )
            let running = Task { try await service.run() }
            defer { running.cancel() }
            try await waitUntil("connected", timeout: .seconds(30)) { service.isConnected }

            let checked = try await service.checkNow()
            #expect(checked.isConnected && checked.fault == nil && checked.failingTarget == nil, "\(checked)")
            #expect(checked.targets.map(\.health) == [.healthy])
            await reachd.kill()
            let error = await #expect(throws: ReachdClientError.self) { try await service.checkNow() }
            #expect(error?.kind == .unreachable, "\(String(describing: error))")
            await server.stop()
        }

        @Test func evidenceOlderThanTheWindowIsNotLikelyConnected() async throws {
            let directory = try TemporaryDirectory("stale")
            let healthPort = try freeLoopbackPort()
            let server = try await HealthServer(port: healthPort)
            let reachd = try await LocalReachd(
                watchingPort: healthPort,
                port: try freeLoopbackPort(),
                directory: directory
            )
            var settings = Self.quickReconnect
            settings.likelyConnectedWindow = .seconds(1)
            let service = ReachdService(
                endpoint: ReachdEndpoint(base: reachd.endpoint),
                settings: settings,
                logger: .quiet
            )
            let running = Task { try await service.run() }
            defer { running.cancel() }
            try await waitUntil("likely connected", timeout: .seconds(30)) { service.isLikelyConnected }

            // A frozen reachd keeps the connection open but says nothing: its last word ages.
            reachd.signal(SIGSTOP)
            try await waitUntil("no longer likely connected", timeout: .seconds(10)) { !service.isLikelyConnected }
            reachd.signal(SIGCONT)
            try await waitUntil("likely connected again", timeout: .seconds(30)) { service.isLikelyConnected }
            await reachd.kill()
            await server.stop()
        }

        @Test func aUnixSocketWithABearerToken() async throws {
            // Short: a unix socket path must fit in 108 bytes.
            let directory = try TemporaryDirectory("sock")
            let healthPort = try freeLoopbackPort()
            let server = try await HealthServer(port: healthPort)
            let tokenFile = "\(directory)/api-token"
            try "s3cret-token\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
            let socket = "\(directory)/reachd.sock"
            let reachd = try await LocalReachd(
                watchingPort: healthPort,
                port: try freeLoopbackPort(),
                directory: directory,
                extra: "socket: \(socket)\napi:\n  bearer_token_file: \(tokenFile)\n"
            )

            let endpoint = try ReachdEndpoint.resolve(configured: socket, tokenFile: tokenFile, environment: [:])
            #expect(endpoint.isUnixSocket && endpoint.token == "s3cret-token")
            let service = ReachdService(endpoint: endpoint, settings: Self.quickReconnect, logger: .quiet)
            let running = Task { try await service.run() }
            defer { running.cancel() }
            try await waitUntil("connected over the socket", timeout: .seconds(30)) { service.isConnected }

            let tokenless = ReachdService(
                endpoint: ReachdEndpoint(base: socket),
                settings: Self.quickReconnect,
                logger: .quiet
            )
            let refused = Task { try await tokenless.run() }
            defer { refused.cancel() }
            try await waitUntil("refused without the token") { tokenless.current.reason.description.contains("401") }
            #expect(tokenless.current.state == .unknown)
            await reachd.kill()
            await server.stop()
        }

        @Test func theEndpointIsTheConfiguredOneElseTheEnvironmentsElseTheDefault() throws {
            #expect(
                try ReachdEndpoint.resolve(
                    configured: "/run/reachd/reachd.sock",
                    environment: ["REACHD_ENDPOINT": "http://h:1"]
                ).base == "/run/reachd/reachd.sock"
            )
            #expect(
                try ReachdEndpoint.resolve(environment: ["REACHD_ENDPOINT": "http://127.0.0.1:9999/"]).base
                    == "http://127.0.0.1:9999"
            )
            #expect(try ReachdEndpoint.resolve(environment: [:]).base == "http://127.0.0.1:9780")
            #expect(throws: ReachdEndpointError.self) {
                try ReachdEndpoint.resolve(tokenFile: "/nonexistent/token", environment: [:])
            }
            // An https endpoint is taken (a reachd with a web configuration file); other schemes are not.
            #expect(
                try ReachdEndpoint.resolve(configured: "https://127.0.0.1:9780", environment: [:]).base
                    == "https://127.0.0.1:9780"
            )
            #expect(throws: ReachdEndpointError.self) {
                try ReachdEndpoint.resolve(configured: "ftp://127.0.0.1:9780", environment: [:])
            }
            // One way to prove who asks, and both halves of it; a CA file that cannot be read fails at once.
            #expect(throws: ReachdEndpointError.self) {
                try ReachdEndpoint.resolve(user: "prometheus", environment: [:])
            }
            #expect(throws: ReachdEndpointError.self) {
                try ReachdEndpoint.resolve(
                    configured: "https://127.0.0.1:9780",
                    caFile: "/nonexistent/ca.pem",
                    environment: [:]
                )
            }
            #expect(throws: ReachdEndpointError.self) {
                try ReachdEndpoint.resolve(environment: ["REACHD_ENDPOINT": "http://127.0.0.1:9780/api"])
            }
            #expect(
                try ReachdEndpoint.resolve(configured: "http://[::1]:9780", environment: [:]).base
                    == "http://[::1]:9780"
            )
        }
    }
}
