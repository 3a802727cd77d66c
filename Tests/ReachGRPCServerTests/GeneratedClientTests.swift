import GRPCCore
import GRPCHealthProto
import GRPCNIOTransportHTTP2
import Glibc
import ReachCore
import ReachGRPCServer
import ReachPOSIX
import ReachSupport
import ReachTesting
import Synchronization
import Testing

/// The same server through grpc-swift's generated `Grpc_Health_V1_Health.Client` over the real
/// HTTP/2 transport: the Swift side of the wire, including the typed `NOT_FOUND` error.
@Suite("gRPC health server against the generated Swift client", .timeLimit(.minutes(1)))
struct GeneratedClientTests {
    @Test func checkWatchAndListOverHTTP2() async throws {
        let harness = MonitorHarness()
        let server = GRPCHealthServer(monitor: harness.monitor, host: "127.0.0.1", port: 0, logger: .quiet)
        let runner = Task { try await server.run() }
        let port = try await server.listeningPort

        try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
        ) { client in
            let health = Grpc_Health_V1_Health.Client(wrapping: client)
            var request = Grpc_Health_V1_HealthCheckRequest()
            #expect(try await health.check(request).status == .unknown)

            request.service = "no-such-target"
            let error = await #expect(throws: RPCError.self) { try await health.check(request) }
            #expect(error?.code == .notFound)

            // Watch "": collect statuses while the monitor goes connected → disconnected → connected.
            let seen = Mutex<[Grpc_Health_V1_HealthCheckResponse.ServingStatus]>([])
            let watcher = Task {
                var overall = Grpc_Health_V1_HealthCheckRequest()
                overall.service = ""
                try await health.watch(overall) { response in
                    for try await message in response.messages {
                        seen.withLock { $0.append(message.status) }
                    }
                }
            }
            try await waitUntil("the current status") { seen.withLock { $0 } == [.unknown] }
            try await harness.connectAndWait()
            try await waitUntil("serving") { seen.withLock { $0 }.last == .serving }
            try await harness.disconnect()
            try await waitUntil("not serving") { seen.withLock { $0 }.last == .notServing }
            try await harness.reconnect()
            try await waitUntil("serving again") { seen.withLock { $0 }.count == 4 }
            #expect(seen.withLock { $0 } == [.unknown, .serving, .notServing, .serving])

            let list = try await health.list(Grpc_Health_V1_HealthListRequest())
            #expect(list.statuses.mapValues(\.status) == ["": .serving, "server": .serving])

            watcher.cancel()
            _ = await watcher.result
        }

        runner.cancel()
        _ = await runner.result
        await harness.stop()
    }

    @Test func boundPortIsReportedAndBindFailureThrows() async throws {
        let harness = MonitorHarness()
        let first = GRPCHealthServer(monitor: harness.monitor, host: "127.0.0.1", port: 0, logger: .quiet)
        let firstRunner = Task { try await first.run() }
        let port = try await first.listeningPort

        // A second server on the same port cannot bind: run() throws the errno rather than hanging.
        let second = GRPCHealthServer(monitor: harness.monitor, host: "127.0.0.1", port: port, logger: .quiet)
        await #expect(throws: SystemCallError("bind", code: EADDRINUSE)) { try await second.run() }

        firstRunner.cancel()
        _ = await firstRunner.result
        await harness.stop()
    }
}
