import Logging
import ReachCore
import ReachDaemon
import ReachTesting
import ServiceLifecycle
import Testing

@Suite("Link service glue")
struct LinkServiceTests {
    @Test func aLinkSourceFeedsTheMonitorUntilCancelled() async throws {
        let clock = TestClock()
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        var configuration = ConnectivityMonitor.Configuration(targets: [.http("server")])
        configuration.linkSettleWindow = .zero
        let monitor = ConnectivityMonitor(configuration: configuration, clock: clock.monitorClock, logger: logger)
        let source = InMemoryLinkSource(initial: .of(.usable()))
        let service = LinkService(source: source, monitor: monitor, logger: logger)
        let running = Task { await service.run() }

        try await waitUntil("the initial snapshot") { monitor.current.verdict.usableInterfaces == ["eth0"] }
        source.send(.offline)
        #expect(monitor.current.verdict.reason == .noLink)
        running.cancel()
        await running.value
        #expect(!source.isRunning)
    }
}
