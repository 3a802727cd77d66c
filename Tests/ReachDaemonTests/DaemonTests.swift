import Logging
import ReachConfig
import ReachCore
import ReachDaemon
import ReachEngine
import ReachSupport
import ReachTesting
import Testing

@Suite("The composition root")
struct DaemonTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    static func configuration() throws -> DaemonConfiguration {
        var configuration = try DaemonConfiguration.load(from: .embeddedDefault)
        configuration.targets = [.http("server")]
        configuration.linkSettleWindow = .zero
        configuration.listen.port = 0
        return configuration
    }

    /// A link source that fails at once, as netlink would where the socket is not permitted.
    struct FailingLinkSource: LinkSource {
        struct Refused: Error {}
        func run(report: @escaping @Sendable (LinkSnapshot) -> Void) async throws { throw Refused() }
    }

    @Test func theLinkSourceFeedsTheMonitorUntilTheDaemonStops() async throws {
        let links = InMemoryLinkSource(initial: .of(.usable()))
        let daemon = Daemon(
            configuration: try Self.configuration(),
            source: .embeddedDefault,
            linkSource: links,
            logger: Self.logger
        )
        let running = Task { try await daemon.run() }
        try await waitUntil("the initial snapshot") { daemon.monitor.current.verdict.usableInterfaces == ["eth0"] }
        #expect(
            daemon.monitor.current.sequence > 1_700_000_000_000_000,
            "this run's ids start at the wall clock in microseconds"
        )
        links.send(.offline)
        #expect(daemon.monitor.current.verdict.reason == .noLink)
        running.cancel()
        try await running.value
        #expect(!links.isRunning)
    }

    @Test func aFailingLinkSourceDoesNotStopTheDaemon() async throws {
        var configuration = try Self.configuration()
        // Port 9 (discard) on loopback: nothing listens here, so the real probe is refused.
        configuration.targets = [
            ProbeTarget(
                name: "server",
                check: .http(
                    HTTPCheck(url: "http://127.0.0.1:9/health", endpoint: HostPort(host: "127.0.0.1", port: 9))
                )
            )
        ]
        let daemon = Daemon(
            configuration: configuration,
            source: .embeddedDefault,
            linkSource: FailingLinkSource(),
            logger: Self.logger
        )
        let running = Task { try await daemon.run() }
        try await waitUntil("the probe's verdict", timeout: .seconds(10)) {
            daemon.monitor.current.verdict.reason == .targetFailed(target: "server", reason: .connectionRefused)
        }
        running.cancel()
        try await running.value
    }

    /// Reports no link, then fails when the test says so, as a netlink socket whose dumps keep failing would.
    struct OfflineThenFailingLinkSource: LinkSource {
        struct Broken: Error {}
        let failing = Gate()
        func run(report: @escaping @Sendable (LinkSnapshot) -> Void) async throws {
            report(.offline)
            await failing.wait()
            throw Broken()
        }
    }

    @Test func aLinkSourceThatDiesLeavesTheVerdictToProbes() async throws {
        var configuration = try Self.configuration()
        // Off this machine (TEST-NET-1), so that the verdict needs a link.
        configuration.targets = [
            ProbeTarget(name: "server", check: .tcp(HostPort(host: "192.0.2.1", port: 9)), timeout: .milliseconds(300))
        ]
        let source = OfflineThenFailingLinkSource()
        let daemon = Daemon(
            configuration: configuration,
            source: .embeddedDefault,
            linkSource: source,
            logger: Self.logger
        )
        let running = Task { try await daemon.run() }
        try await waitUntil("no link") { daemon.monitor.current.verdict.reason == .noLink }
        source.failing.open()
        try await waitUntil("probes decide", timeout: .seconds(10)) {
            daemon.monitor.current.verdict.reason.target == "server"
        }
        running.cancel()
        try await running.value
    }

    /// A reload goes through the engine (``ReachEngine/ConnectivityEngine/apply(_:)``) and adds what
    /// only the daemon cannot apply live; the check-wait limit then follows the new targets.
    @Test func aReloadAppliesLiveNamesWhatNeedsARestartAndMovesTheCheckWaitLimit() async throws {
        let old = try Self.configuration()
        var new = old
        new.targets[0].interval = .seconds(5)
        new.targets.append(
            ProbeTarget(name: "extra", check: .tcp(HostPort(host: "127.0.0.1", port: 22)), timeout: .seconds(10))
        )
        new.listen.port = 9999
        new.policy = .any
        let daemon = Daemon(
            configuration: old,
            source: .embeddedDefault,
            linkSource: InMemoryLinkSource(initial: .offline),
            reload: { [new] in new },
            logger: Self.logger
        )
        let running = Task { try await daemon.run() }
        defer { running.cancel() }
        try await waitUntil("no link") { daemon.monitor.current.verdict.reason == .noLink }
        #expect(daemon.checkWaitLimit == .seconds(3))

        let change = try #require(await daemon.reload())
        #expect(change.addedTargets == ["extra"])
        #expect(change.changedTargets == ["server"])
        #expect(change.removedTargets == [])
        #expect(change.needsRestart == ["listen"])
        #expect(change.targetsChanged && change.appliesLive)
        #expect(change.summary == "targets +1 -0 ~1 (added: extra; changed: server); restart needed for: listen")
        #expect(change.checkWaitLimit == .seconds(11))
        #expect(daemon.checkWaitLimit == .seconds(11), "what POST /v1/check waits now")
        #expect(daemon.monitor.targets.map(\.name) == ["server", "extra"])

        let none = try #require(await daemon.reload())
        #expect(!none.targetsChanged && !none.appliesLive && none.needsRestart.isEmpty)
        #expect(none.summary == "targets +0 -0 ~0")
    }

    @Test func aConfigurationBuiltInCodeCannotServeBeyondLoopbackWithoutAToken() async throws {
        var configuration = try Self.configuration()
        configuration.listen = HostPort(host: "0.0.0.0", port: 0)
        let daemon = Daemon(
            configuration: configuration,
            source: .embeddedDefault,
            linkSource: InMemoryLinkSource(initial: .offline),
            logger: Self.logger
        )
        await #expect(throws: UnprotectedStatusEndpoint.self) { try await daemon.run() }
    }
}
