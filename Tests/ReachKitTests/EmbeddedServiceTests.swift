import Foundation
import ReachConfig
import ReachCore
import ReachKit
import ReachKitEmbedded
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

extension ReachKitProcessTests {
    /// The embedded service in this process, on this machine's links, probing a server on loopback.
    @Suite("The embedded service's check")
    struct EmbeddedCheckTests {
        @Test func checkNowProbesAtOnceInsteadOfAtTheNextInterval() async throws {
            let server = try await HealthServer()
            let configuration = try DaemonConfiguration.parse(
                "server:\n  base_url: http://127.0.0.1:\(server.port)\n  health_path: /api/v1/health\nprobe:\n  interval: 60s\n  timeout: 2s\n",
                source: "test"
            ).engine
            let service = try EmbeddedService(configuration: configuration, logger: .quiet)
            let running = Task { try await service.run() }
            defer { running.cancel() }
            try await waitUntil("connected", timeout: .seconds(30)) { service.isConnected }

            await server.stop()
            // A minute before the next probe is due, the check finds the server gone.
            let started = ContinuousClock.now
            let checked = await service.checkNow()
            #expect(ContinuousClock.now - started < .seconds(10))
            #expect(checked.state == .disconnected && checked.reason.code == "connection_refused", "\(checked.reason)")
            #expect(checked.failingTarget == "server")
        }

        /// A program changes what it watches while the service runs, as reachd's reload does.
        @Test func applyChangesTheTargetsLiveNamesWhatNeedsANewServiceAndMovesTheCheckWait() async throws {
            let first = try await HealthServer()
            let second = try await HealthServer()
            func target(_ name: String, _ server: HealthServer, timeout: Duration) -> ProbeTarget {
                ProbeTarget(
                    name: name,
                    check: .http(HTTPCheck(url: server.url, endpoint: HostPort(host: "127.0.0.1", port: server.port))),
                    timeout: timeout
                )
            }
            let service = try EmbeddedService(
                configuration: Configuration(targets: [target("first", first, timeout: .seconds(2))]),
                logger: .quiet
            )
            let running = Task { try await service.run() }
            defer { running.cancel() }
            try await waitUntil("connected", timeout: .seconds(30)) { service.isConnected }
            #expect(service.checkWaitLimit == .seconds(3))

            var new = Configuration(targets: [target("second", second, timeout: .seconds(5))])
            new.certificateWarning = .seconds(86_400)
            #expect(await service.apply(new) == ["tls.warn_before"])
            #expect(service.checkWaitLimit == .seconds(6))
            // Only the new target is watched now: the first server going away changes nothing.
            await first.stop()
            let checked = await service.checkNow()
            #expect(checked.state == .connected, "\(checked.reason)")
            #expect(service.current.state == .connected)
            await second.stop()
            let lost = await service.checkNow()
            #expect(lost.state == .disconnected && lost.failingTarget == "second", "\(lost.reason)")
        }
    }

    /// The embedded service (in `reachkit-example embedded`, run inside a network namespace) and reachd
    /// (in the same namespace, read through its unix socket) watch the same server over the same link:
    /// for each fault they give the same verdict.
    @Suite(
        "The embedded service",
        .serialized,
        .enabled(if: TestNamespace.isAvailable, Comment(rawValue: TestNamespace.unavailableReason))
    )
    struct EmbeddedServiceTests {
        private static let products = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()

        @Test func givesTheDaemonsVerdictsForTheSameFaults() async throws {
            let directory = try TemporaryDirectory("embedded")
            let namespace = try await TestNamespace.make("embedded")
            // rd0 is the host's link (address, default route); rd1 holds the server's address.
            try await namespace.addVethWithDefaultRoute()
            try await namespace.ip("addr", "add", "198.51.100.1/24", "dev", "rd1")

            let socket = "\(directory)/reachd.sock"
            let config = "\(directory)/reachd.yaml"
            try """
            server:
              base_url: http://198.51.100.1:8080
            probe:
              interval: 200ms
              timeout: 1s
            socket: \(socket)
            """.write(toFile: config, atomically: true, encoding: .utf8)
            var server = try await startServer(in: namespace)
            let reachd = try ReachdProcess(
                ["--config", config],
                listen: nil,
                namespace: namespace,
                log: "\(directory)/reachd.log"
            )
            defer { reachd.signal(SIGKILL) }
            // Line-buffered: the example prints with `print`, which a pipe would hold in its buffer.
            let example = TestNamespace.command(
                ["stdbuf", "-oL", Self.products.appending(path: "reachkit-example").path, "embedded", config],
                in: namespace
            )
            let embedded = try ChildProcess(
                "reachkit-example",
                executable: example.executable,
                arguments: example.arguments,
                errorLog: "\(directory)/example.log",
                environment: ProcessInfo.processInfo.environment.merging(["XDG_STATE_HOME": directory.path]) { $1 }
            )
            defer { embedded.signal(SIGKILL) }
            let daemon = ReachdService(endpoint: ReachdEndpoint(base: socket), logger: .quiet)
            let following = Task { try await daemon.run() }
            defer { following.cancel() }

            var linesSeen = 0
            /// Waits until both say `state reason` (the embedded service in a line printed since the last fault).
            func bothSay(_ state: ConnectivityState, _ reason: String) async throws {
                try await waitUntil("reachd says \(state) \(reason)", timeout: .seconds(30)) {
                    daemon.current.state == state && daemon.current.reason.code == reason
                }
                let since = linesSeen
                try await waitUntil("the embedded service says \(state) \(reason)", timeout: .seconds(30)) {
                    embedded.output.dropFirst(since).contains { $0.hasPrefix("verdict: \(state.rawValue) \(reason) ") }
                }
                linesSeen = embedded.output.count
            }

            try await bothSay(.connected, "healthy")
            try await namespace.ip("link", "set", "rd0", "down")
            try await bothSay(.disconnected, "no_link")
            try await namespace.ip("link", "set", "rd0", "up")
            try await namespace.ip("route", "replace", "default", "via", "198.51.100.1", "dev", "rd0")
            try await bothSay(.connected, "healthy")
            await server.stop()
            try await bothSay(.disconnected, "connection_refused")
            server = try await startServer(in: namespace)
            try await bothSay(.connected, "healthy")
            await server.stop()
            following.cancel()
            reachd.signal(SIGKILL)
            embedded.signal(SIGKILL)
            await reachd.waitForExit()
            await embedded.waitForExit()
            await namespace.delete()
        }

        /// The server both watch: 200 `ok` at 198.51.100.1:8080, the address of the namespace's far end.
        private func startServer(in namespace: TestNamespace) async throws -> StandInServer {
            let server = try StandInServer(name: "server", listen: ["198.51.100.1:8080"], namespace: namespace)
            try await server.waitUntilReady()
            return server
        }
    }
}
