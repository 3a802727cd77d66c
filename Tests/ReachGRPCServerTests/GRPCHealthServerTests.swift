import ReachCore
import ReachGRPCServer
import ReachSupport
import ReachTesting
import ServiceLifecycle
import Testing

/// The gRPC health server against grpcio's own client (Python's `HealthStub`), over real HTTP/2 on
/// 127.0.0.1 with a kernel-chosen port, while the monitor goes connected → disconnected → connected.
@Suite("gRPC health server against grpcio's HealthStub", .serialized, .timeLimit(.minutes(2)))
struct GRPCHealthServerTests {
    /// A monitor, the server on it running in a service group, and the port it bound.
    struct Running {
        let harness: MonitorHarness
        let server: GRPCHealthServer
        let group: ServiceGroup
        let runner: Task<Void, any Error>
        let port: Int

        static func start(token: Secret? = nil, maxConnections: Int = 256) async throws -> Running {
            let harness = MonitorHarness()
            let server = GRPCHealthServer(
                monitor: harness.monitor,
                host: "127.0.0.1",
                port: 0,
                bearerToken: token,
                maxConnections: maxConnections,
                logger: .quiet
            )
            let group = ServiceGroup(
                services: [server],
                gracefulShutdownSignals: [],
                cancellationSignals: [],
                logger: .quiet
            )
            let runner = Task { try await group.run() }
            let port = try await server.listeningPort
            #expect(port > 0)
            return Running(harness: harness, server: server, group: group, runner: runner, port: port)
        }

        func stop() async {
            runner.cancel()
            _ = await runner.result
            await harness.stop()
        }
    }

    @Test func aConnectionPastTheLimitIsClosedAndTheOthersAreServed() async throws {
        let running = try await Running.start(maxConnections: 3)
        var held = try (0..<3).map { _ in try PlainConnection(port: running.port) }
        // The server greets a connection it accepted and counted (the budget is applied before).
        for connection in held { try await connection.waitForServerPreface() }
        let extra = try PlainConnection(port: running.port)
        #expect(await extra.isClosedByPeer(within: .seconds(5)), "the fourth connection is closed at once")
        // A PING answered after the fourth was closed: the first three are still open and served.
        for connection in held { try await connection.ping() }
        held.removeAll()
        // The server learns of the closes on its own loop: on a busy machine that takes a moment.
        var answer: [String] = []
        try? await waitUntil("a check served once the held connections closed", timeout: .seconds(15)) {
            answer = (try? await HealthClientProcess.run(port: running.port, "check", "")) ?? []
            return answer == ["UNKNOWN"]
        }
        #expect(answer == ["UNKNOWN"], "served once they closed")
        await running.stop()
    }

    @Test func withATokenEveryCallMustCarryIt() async throws {
        let running = try await Running.start(token: Secret("s3cret"))
        let port = running.port
        try await running.harness.connectAndWait()
        #expect(try await HealthClientProcess.run(port: port, token: "s3cret", "check", "") == ["SERVING"])
        #expect(
            try await HealthClientProcess.run(port: port, token: "s3cret", "list") == [
                #""" SERVING"#, #""server" SERVING"#,
            ]
        )
        #expect(try await HealthClientProcess.run(port: port, "check", "") == ["error: UNAUTHENTICATED"])
        #expect(
            try await HealthClientProcess.run(port: port, token: "guess", "check", "") == ["error: UNAUTHENTICATED"]
        )
        #expect(try await HealthClientProcess.run(port: port, token: "guess", "list") == ["error: UNAUTHENTICATED"])
        #expect(try await HealthClientProcess.run(port: port, "watch", "") == ["ready", "end: UNAUTHENTICATED"])
        await running.stop()
    }

    @Test func checkAndListFollowTheVerdict() async throws {
        let running = try await Running.start()
        let port = running.port

        // No evidence yet: the verdict and the target are UNKNOWN, not NOT_SERVING.
        #expect(try await HealthClientProcess.run(port: port, "check", "") == ["UNKNOWN"])
        #expect(try await HealthClientProcess.run(port: port, "check", "server") == ["UNKNOWN"])
        #expect(try await HealthClientProcess.run(port: port, "check", "no-such-target") == ["error: NOT_FOUND"])
        #expect(try await HealthClientProcess.run(port: port, "list") == [#""" UNKNOWN"#, #""server" UNKNOWN"#])

        try await running.harness.connectAndWait()
        #expect(try await HealthClientProcess.run(port: port, "check", "") == ["SERVING"])
        #expect(try await HealthClientProcess.run(port: port, "check", "server") == ["SERVING"])
        #expect(try await HealthClientProcess.run(port: port, "list") == [#""" SERVING"#, #""server" SERVING"#])

        try await running.harness.disconnect()
        #expect(try await HealthClientProcess.run(port: port, "check", "") == ["NOT_SERVING"])
        #expect(try await HealthClientProcess.run(port: port, "check", "server") == ["NOT_SERVING"])
        #expect(
            try await HealthClientProcess.run(port: port, "list") == [#""" NOT_SERVING"#, #""server" NOT_SERVING"#]
        )
        #expect(try await HealthClientProcess.run(port: port, "check", "no-such-target") == ["error: NOT_FOUND"])

        try await running.harness.reconnect()
        #expect(try await HealthClientProcess.run(port: port, "check", "") == ["SERVING"])

        await running.stop()
    }

    @Test func watchSendsEveryChangeAndEndsOnGracefulShutdown() async throws {
        let running = try await Running.start()
        try await running.harness.connectAndWait()

        let overall = try HealthClientProcess(port: running.port, "watch", "")
        defer { overall.kill() }
        let target = try HealthClientProcess(port: running.port, "watch", "server")
        defer { target.kill() }
        let unknown = try HealthClientProcess(port: running.port, "watch", "no-such-target")
        defer { unknown.kill() }

        // The current status at once.
        #expect(try await overall.lines(atLeast: 2) == ["ready", "SERVING"])
        #expect(try await target.lines(atLeast: 2) == ["ready", "SERVING"])
        #expect(
            try await unknown.lines(atLeast: 2) == ["ready", "SERVICE_UNKNOWN"],
            "SERVICE_UNKNOWN, and the call stays open"
        )

        try await running.harness.disconnect()
        #expect(try await overall.lines(atLeast: 3).last == "NOT_SERVING")
        #expect(try await target.lines(atLeast: 3).last == "NOT_SERVING")

        try await running.harness.reconnect()
        #expect(try await overall.lines(atLeast: 4).last == "SERVING")
        #expect(try await target.lines(atLeast: 4).last == "SERVING")

        // A change the watched service does not see (another probe result, same health) sends nothing:
        // the next change it does see, which each watch handles after that one, comes right after
        // the last SERVING.
        running.harness.record(.ok("server"))
        try await running.harness.disconnect()
        #expect(try await overall.lines(atLeast: 5) == ["ready", "SERVING", "NOT_SERVING", "SERVING", "NOT_SERVING"])
        #expect(try await target.lines(atLeast: 5) == ["ready", "SERVING", "NOT_SERVING", "SERVING", "NOT_SERVING"])

        // Graceful shutdown ends every watch with OK; the clients see the end and exit.
        await running.group.triggerGracefulShutdown()
        #expect(
            try await overall.allLines() == ["ready", "SERVING", "NOT_SERVING", "SERVING", "NOT_SERVING", "end: OK"]
        )
        #expect(
            try await target.allLines() == ["ready", "SERVING", "NOT_SERVING", "SERVING", "NOT_SERVING", "end: OK"]
        )
        #expect(try await unknown.allLines() == ["ready", "SERVICE_UNKNOWN", "end: OK"])
        try await overall.waitForExit()
        try await unknown.waitForExit()

        // And the server itself returns without being cancelled.
        let stopped = await waitWithin(.seconds(10)) { _ = await running.runner.result }
        #expect(stopped, "the service group returns after a graceful shutdown")
        await running.stop()
    }

    @Test func unknownVerdictIsUnknownNotNotServing() async throws {
        let running = try await Running.start()
        let watch = try HealthClientProcess(port: running.port, "watch", "")
        defer { watch.kill() }
        #expect(try await watch.lines(atLeast: 2) == ["ready", "UNKNOWN"])
        try await running.harness.connectAndWait()
        #expect(try await watch.lines(atLeast: 3) == ["ready", "UNKNOWN", "SERVING"])
        await running.stop()
        // Cancellation (not a graceful shutdown) closes the connection: the client sees the call fail.
        let last = try await watch.allLines().last
        #expect(last?.hasPrefix("end: ") == true)
    }

    /// Runs `body` and reports whether it finished within `limit` (it keeps running otherwise).
    func waitWithin(_ limit: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await body()
                return true
            }
            group.addTask {
                // The deadline itself, not synchronisation: whichever child ends first decides.
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
