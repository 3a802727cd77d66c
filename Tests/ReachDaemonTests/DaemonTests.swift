import Logging
import ReachConfig
import ReachCore
import ReachDaemon
import ReachTesting
import Testing

@Suite("The composition root")
struct DaemonTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    static func configuration() throws -> Configuration {
        var configuration = try Configuration.load(from: .embeddedDefault)
        configuration.targets = [.http("server")]
        configuration.linkSettleWindow = .zero
        return configuration
    }

    /// A link source that fails at once, as netlink would where the socket is not permitted.
    struct FailingLinkSource: LinkSource {
        struct Refused: Error {}
        func run(report: @escaping @Sendable (LinkSnapshot) -> Void) async throws { throw Refused() }
    }

    @Test func theLinkSourceFeedsTheMonitorUntilTheDaemonStops() async throws {
        let links = InMemoryLinkSource(initial: .of(.usable()))
        let daemon = Daemon(configuration: try Self.configuration(), source: .embeddedDefault, linkSource: links, logger: Self.logger)
        let running = Task { try await daemon.run() }
        try await waitUntil("the initial snapshot") { daemon.monitor.current.verdict.usableInterfaces == ["eth0"] }
        links.send(.offline)
        #expect(daemon.monitor.current.verdict.reason == .noLink)
        running.cancel()
        try await running.value
        #expect(!links.isRunning)
    }

    @Test func aFailingLinkSourceDoesNotStopTheDaemon() async throws {
        let daemon = Daemon(configuration: try Self.configuration(), source: .embeddedDefault, linkSource: FailingLinkSource(), logger: Self.logger)
        let running = Task { try await daemon.run() }
        var events = daemon.monitor.subscribe().makeAsyncIterator()
        _ = await events.next()
        try await Task.sleep(for: .milliseconds(200))
        daemon.monitor.record(.ok("server"), epoch: daemon.monitor.probeEpoch)
        let event = await events.next()
        #expect(event?.verdict.state == .connected, "the monitor must still be running, on probes alone")
        running.cancel()
        try await running.value
    }
}
