import Logging
import ReachCore
import ReachLink
import ReachSupport
import ReachTestRigs
import ReachTesting
import Synchronization
import Testing

/// The real adapter feeding the real monitor, in a throw-away namespace: what a subscriber sees
/// when the kernel's link state changes.
@Suite(.enabled(if: TestNamespace.isAvailable, Comment(rawValue: TestNamespace.unavailableReason)))
struct NetlinkVerdictIntegrationTests {
    /// A monitor watching rd0 in `namespace`, with its adapter running; stopped by `stop()`.
    final class Rig: Sendable {
        let monitor: ConnectivityMonitor
        private let running: Task<Void, Never>

        init(namespace: TestNamespace) {
            let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
            let target = ProbeTarget(name: "server", check: .tcp(HostPort(host: "203.0.113.10", port: 443)))
            let monitor = ConnectivityMonitor(
                configuration: .init(
                    targets: [target],
                    interfaceFilter: InterfaceFilter(include: ["rd0"], exclude: [])
                ),
                clock: MonitorClock(ContinuousClock()) { WallTime(sinceEpoch: .zero) },
                logger: logger
            )
            let source = NetlinkLinkSource(logger: logger, networkNamespacePath: "/run/netns/\(namespace.name)")
            self.monitor = monitor
            running = Task {
                await withDiscardingTaskGroup { group in
                    group.addTask { await monitor.run() }
                    group.addTask { try? await source.run(report: monitor.update(links:)) }
                }
            }
        }

        var verdict: Verdict { monitor.current.verdict }

        func probeSucceeds() {
            monitor.record(.success("server", latency: .milliseconds(1)), epoch: monitor.probeEpoch)
        }

        func waitFor(_ what: String, _ condition: @escaping (Verdict) -> Bool) async throws {
            try await waitUntil(what, timeout: .seconds(5)) { condition(self.verdict) }
        }

        func stop() async {
            running.cancel()
            await running.value
        }
    }

    func withRig(_ label: String, _ body: (TestNamespace, Rig) async throws -> Void) async throws {
        let namespace = try await TestNamespace.make(label)
        var rig: Rig?
        do {
            try await namespace.addVethWithDefaultRoute()
            let running = Rig(namespace: namespace)
            rig = running
            try await running.waitFor("rd0 usable") { $0.usableInterfaces == ["rd0"] }
            try await body(namespace, running)
        } catch {
            await rig?.stop()
            await namespace.delete()
            throw error
        }
        await rig?.stop()
        await namespace.delete()
    }

    @Test func linkLossDisconnectsAndRestorationAsksForAProbe() async throws {
        try await withRig("verdict") { namespace, rig in
            #expect(rig.verdict.reason == .awaitingProbe)
            rig.probeSucceeds()
            #expect(rig.verdict.state == .connected)

            let lost = Mutex(0)
            rig.monitor.onConnectivityLost { _ in lost.withLock { $0 += 1 } }
            var control = rig.monitor.probeControl().makeAsyncIterator()
            let before = try #require(await control.next())

            try await namespace.ip("link", "set", "rd0", "down")
            try await rig.waitFor("no_link") { $0.state == .disconnected && $0.reason == .noLink }
            #expect(await control.next()?.suspension == .noUsableLink)
            let inFlight = rig.monitor.probeEpoch

            try await namespace.ip("link", "set", "rd0", "up")
            try await namespace.ip("route", "replace", "default", "via", "198.51.100.1", "dev", "rd0")
            try await rig.waitFor("awaiting a probe on the regained link") { $0.reason == .awaitingProbe }
            let resumed = try #require(await control.next())
            #expect(resumed.suspension == nil)
            #expect(resumed.immediateProbeRequests > before.immediateProbeRequests)

            rig.monitor.record(.success("server", latency: .milliseconds(1)), epoch: inFlight)
            #expect(rig.verdict.state == .disconnected, "a probe from before the loss must not restore connectivity")
            rig.probeSucceeds()
            #expect(rig.verdict.state == .connected)
            try await waitUntil("the lost callback") { lost.withLock { $0 } == 1 }
        }
    }

    @Test func peerDownAddressAndRouteLossNameTheirReasons() async throws {
        try await withRig("reasons") { namespace, rig in
            rig.probeSucceeds()
            try await namespace.ip("link", "set", "rd1", "down")
            try await rig.waitFor("carrier loss") { $0.reason == .noLink }
            try await namespace.ip("link", "set", "rd1", "up")
            try await namespace.ip("route", "replace", "default", "via", "198.51.100.1", "dev", "rd0")
            try await rig.waitFor("usable again") { $0.reason == .awaitingProbe }

            try await namespace.ip("route", "del", "default")
            try await rig.waitFor("no default route") { $0.reason == .noRoute }
            try await namespace.ip("addr", "del", "198.51.100.2/24", "dev", "rd0")
            try await rig.waitFor("no address") { $0.reason == .noAddress }
        }
    }
}
