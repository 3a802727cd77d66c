import Logging
import ReachSupport
import ReachTesting
import Synchronization
import Testing

@testable import ReachCore

/// The verdict's quality (``VerdictQuality``) through the combiner and the monitor: beside the
/// verdict, never changing it, never a transition, and placed at the first hop when the default
/// gateway's own target is impaired.
struct QualityVerdictTests {
    /// 300 ms of latency over a 3 s window, judged from 3 samples.
    static let budget = QualityBudget(latency: .milliseconds(300), window: .seconds(3))
    /// The same over 6 s, for two targets probed in turn (each one's samples 2 s apart): 3 samples.
    static let pairBudget = QualityBudget(latency: .milliseconds(300), window: .seconds(6))

    static func target(_ name: String, host: String = "203.0.113.10", budget: QualityBudget? = budget) -> ProbeTarget {
        var target = ProbeTarget.http(name, host: host)
        target.quality = budget
        return target
    }

    static func slow(_ name: String) -> ProbeResult { .ok(name, ms: 400) }

    /// Records `result` `times` times, a second apart on the harness's clock.
    static func record(_ harness: MonitorHarness, _ result: ProbeResult, times: Int) {
        for _ in 0..<times {
            harness.clock.advance(by: .seconds(1))
            harness.record(result)
        }
    }

    /// The sequence of every transition a callback ran for, restorations and losses alike.
    final class CallbackLog: Sendable {
        private let sequences = Mutex<[UInt64]>([])

        init(_ monitor: ConnectivityMonitor) {
            monitor.onConnectivityRestored(named: "restored") { self.note($0) }
            monitor.onConnectivityLost(named: "lost") { self.note($0) }
        }

        var runs: [UInt64] { sequences.withLock { $0 } }

        private func note(_ transition: ConnectivityTransition) {
            sequences.withLock { $0.append(transition.sequence) }
        }
    }

    @Test func aTargetWithoutEnoughSamplesHasNoQualityThenAGoodOne() {
        var driver = CombinerDriver([Self.target("server")])
        driver.links(.of(.usable()))
        driver.results(.ok("server"), .ok("server"))
        #expect(driver.state == .connected)
        #expect(driver.verdict.quality == nil)
        #expect(driver.verdict.targets[0].quality == nil)
        driver.result(.ok("server"))
        #expect(driver.verdict.targets[0].quality?.state == .good)
        #expect(driver.verdict.quality?.state == .good)
        #expect(driver.verdict.quality?.fault == nil)
        #expect(driver.lastChange.qualityChanged && driver.lastChange.isNews)
        #expect(!driver.lastChange.isHeadline, "the verdict's state, reason and fault did not change")
    }

    @Test func aSlowServerIsImpairedAtTheServerAndTheVerdictStaysConnectedWithoutATransition() {
        var driver = CombinerDriver([Self.target("server")])
        driver.links(.of(.usable()))
        driver.results(.ok("server"), .ok("server"), .ok("server"))
        let since = driver.verdict.since
        var changes: [ConnectivityCombiner.Change] = []
        for _ in 0..<5 {
            driver.result(Self.slow("server"))
            changes.append(driver.lastChange)
        }
        let quality = driver.verdict.quality
        #expect(quality?.state == .impaired)
        #expect(quality?.fault == .server)
        #expect(quality?.target == "server")
        #expect(quality?.exceeded == [QualityFinding(measure: .latency, value: 0.4, budget: 0.3)])
        #expect(driver.state == .connected)
        #expect(driver.reason == .healthy)
        #expect(driver.verdict.fault == nil)
        #expect(driver.verdict.since == since)
        #expect(changes.allSatisfy { $0.transition == nil })
        #expect(changes.map(\.qualityChanged) == [false, false, false, true, false], "news once, at the change")
    }

    @Test func theGatewaysOwnImpairedTargetPlacesTheSlownessAtTheFirstHop() {
        for (kind, expected) in [(InterfaceKind.ethernet, Fault.gateway), (.wifi, .link), (.wwan, .link)] {
            var driver = CombinerDriver([
                Self.target("server", budget: Self.pairBudget),
                Self.target("router", host: "192.168.1.1", budget: Self.pairBudget),
            ])
            driver.links(.of(InterfaceFacts.usable().with { $0.kind = kind }))
            for _ in 0..<3 { driver.results(.ok("server"), .ok("router")) }
            #expect(driver.verdict.quality?.state == .good)
            for _ in 0..<4 { driver.results(Self.slow("server"), Self.slow("router")) }
            #expect(driver.verdict.quality?.state == .impaired)
            #expect(driver.verdict.quality?.fault == expected, "\(kind)")
            #expect(driver.verdict.quality?.target == "router", "the gateway's, though the server came first")
        }
    }

    /// A burst of 5 echoes to `name`, up with `received` of them back after 10 ms each.
    static func burst(_ name: String, received: Int) -> ProbeResult {
        var result = ProbeResult.ok(name, ms: 10)
        result.echoes = EchoStatistics(sent: 5, roundTrips: Array(repeating: .milliseconds(10), count: received))
        return result
    }

    @Test func anICMPTargetLosingEchoesIsImpairedByTheEchoesLostThoughEveryProbeIsUp() {
        var ping = ProbeTarget(name: "ping", check: .icmp(ICMPCheck(host: "203.0.113.1")))
        ping.quality = QualityBudget(loss: 0.1, window: .seconds(3))
        var driver = CombinerDriver([ping])
        driver.links(.of(.usable()))
        for _ in 0..<3 { driver.result(Self.burst("ping", received: 5)) }
        #expect(driver.verdict.quality?.state == .good)
        // 1, 2, 3 lost echoes of 15 in the window: 6.7 % (within), then 13 % and 20 % past the
        // budget, and 20 % a third time in a row.
        for _ in 0..<4 { driver.result(Self.burst("ping", received: 4)) }
        #expect(driver.state == .connected, "one echo back is up")
        #expect(driver.verdict.targets[0].qualityMeasures?.loss == 0.2, "3 of 15 echoes, not 0 of 3 probes")
        #expect(driver.verdict.quality?.state == .impaired)
        #expect(driver.verdict.quality?.exceeded == [QualityFinding(measure: .loss, value: 0.2, budget: 0.1)])
        #expect(driver.verdict.quality?.fault == .server)
    }

    @Test func aSlowDNSTargetIsTheResolversEvenWhenTheResolverIsTheGateway() {
        for server in ["203.0.113.53", "192.168.1.1"] {
            var resolver = ProbeTarget(
                name: "resolver",
                check: .dns(DNSCheck(query: "api.example.org", server: HostPort(host: server, port: 53)))
            )
            resolver.quality = Self.budget
            var driver = CombinerDriver([resolver])
            driver.links(.of(.usable()))
            for _ in 0..<5 { driver.result(Self.slow("resolver")) }
            #expect(driver.verdict.quality?.state == .impaired)
            #expect(driver.verdict.quality?.fault == .dns, "\(server): the resolver answers slowly")
            #expect(driver.verdict.quality?.target == "resolver")
        }
    }

    @Test func aSlowTargetOnAnotherAddressThanTheGatewayIsTheServers() {
        var driver = CombinerDriver([
            Self.target("server", budget: Self.pairBudget),
            Self.target("other", host: "192.168.1.2", budget: Self.pairBudget),
        ])
        driver.links(.of(.usable()))
        for _ in 0..<3 { driver.results(.ok("server"), .ok("other")) }
        for _ in 0..<4 { driver.results(.ok("server"), Self.slow("other")) }
        #expect(driver.verdict.quality?.fault == .server)
        #expect(driver.verdict.quality?.target == "other")
    }

    @Test func onlyTheTargetsThePolicyCountsMakeTheVerdictsQuality() {
        var driver = CombinerDriver(
            [Self.target("a", budget: Self.pairBudget), Self.target("b", budget: Self.pairBudget)],
            policy: .any
        )
        driver.links(.of(.usable()))
        for _ in 0..<3 { driver.results(.ok("a"), .ok("b")) }
        for _ in 0..<4 { driver.results(.ok("a"), Self.slow("b")) }
        #expect(driver.verdict.quality?.state == .impaired, "b is healthy: counted")
        driver.result(.refused("b"))
        #expect(driver.state == .connected)
        #expect(driver.verdict.targets[1].quality?.state == .impaired)
        #expect(driver.verdict.quality?.state == .good, "b is down: not counted; a is good")
        #expect(driver.lastChange.qualityChanged)
    }

    @Test func aTargetWithoutABudgetDoesNotCountAndNoBudgetAtAllIsNoQuality() {
        var driver = CombinerDriver([Self.target("a", budget: Self.pairBudget), Self.target("b", budget: nil)])
        driver.links(.of(.usable()))
        for _ in 0..<3 { driver.results(.ok("a"), Self.slow("b")) }
        #expect(driver.verdict.quality?.state == .good)
        #expect(driver.verdict.targets[1].quality == nil)
        #expect(driver.verdict.targets[1].qualityMeasures == nil)

        var none = CombinerDriver([Self.target("a", budget: nil)])
        none.links(.of(.usable()))
        for _ in 0..<10 { none.result(Self.slow("a")) }
        #expect(none.verdict.quality == nil)
    }

    @Test func aDisconnectedVerdictHasNoQualityAndALostLinkForgetsTheWindows() {
        var driver = CombinerDriver([Self.target("server", budget: QualityBudget(loss: 0.1, window: .seconds(3)))])
        driver.links(.of(.usable()))
        driver.results(.ok("server"), .ok("server"), .ok("server"))
        #expect(driver.verdict.quality?.state == .good)
        driver.result(.refused("server"))
        #expect(driver.state == .disconnected)
        #expect(driver.verdict.quality == nil)
        #expect(driver.lastChange.qualityChanged)
        driver.links(.offline)
        driver.links(.of(.usable()))
        #expect(driver.verdict.targets[0].quality == nil)
        #expect(driver.verdict.targets[0].qualityMeasures?.samples == 0)
    }

    @Test func theVerdictsQualityKeepsItsSinceWhileItStands() {
        var driver = CombinerDriver([Self.target("server")])
        driver.links(.of(.usable()))
        for _ in 0..<5 { driver.result(Self.slow("server")) }
        let since = driver.verdict.quality?.since
        #expect(driver.verdict.quality?.state == .impaired)
        driver.result(.ok("server", ms: 600))
        #expect(driver.verdict.quality?.since == since)
        #expect(driver.verdict.quality?.exceeded.first?.value == 0.4, "the median of 400, 400, 600")
        #expect(!driver.lastChange.qualityChanged, "a new value is not news")
    }

    @Test func aReloadKeepsAnUnchangedTargetsWindowAndStartsAChangedOnesAnew() {
        let a = Self.target("a", budget: Self.pairBudget)
        var driver = CombinerDriver([a, Self.target("b", budget: Self.pairBudget)])
        driver.links(.of(.usable()))
        for _ in 0..<3 { driver.results(.ok("a"), .ok("b")) }
        var changedB = Self.target("b", budget: Self.pairBudget)
        changedB.quality?.latency = .milliseconds(200)
        _ = driver.combiner.reconfigure(
            targets: [a, changedB],
            unchanged: ["a"],
            policy: .all,
            filter: InterfaceFilter(),
            portalCheck: nil,
            at: driver.now
        )
        #expect(driver.verdict.targets[0].quality?.state == .good)
        #expect(driver.verdict.targets[1].quality == nil)
        #expect(driver.verdict.quality == nil, "b is not known yet")
    }

    /// Quality never fires a restoration (or loss) callback: after impaired and good again, a real
    /// restoration runs the callback exactly once, with its own sequence.
    @Test func qualityNeverRunsACallback() async throws {
        let harness = MonitorHarness(targets: [Self.target("server")])
        let log = CallbackLog(harness.monitor)
        harness.monitor.update(links: .of(.usable()))
        var events = harness.monitor.subscribe().makeAsyncIterator()
        Self.record(harness, .ok("server"), times: 3)
        Self.record(harness, Self.slow("server"), times: 5)
        #expect(harness.monitor.current.verdict.quality?.state == .impaired)
        Self.record(harness, .ok("server"), times: 7)
        #expect(harness.monitor.current.verdict.quality?.state == .good)
        var qualities: [QualityState?] = []
        while let event = await events.next(), event.sequence < harness.sequence {
            qualities.append(event.verdict.quality?.state)
        }
        #expect(qualities.contains(.impaired), "the impaired quality was published")
        harness.record(.refused("server"))
        harness.record(.ok("server"))
        let restored = harness.sequence
        try await waitUntil("the restoration's callback ran") { log.runs.count == 2 }
        #expect(log.runs.last == restored)
        await harness.stop()
    }

    /// A reload that changes only a budget keeps the target's health and the verdict: no
    /// transition, so no callback; the target is judged anew under its new budget.
    @Test func aReloadThatChangesOnlyTheBudgetKeepsTheVerdictAndRunsNoCallback() async throws {
        let harness = MonitorHarness(targets: [Self.target("server")])
        let log = CallbackLog(harness.monitor)
        harness.monitor.update(links: .of(.usable()))
        Self.record(harness, .ok("server"), times: 3)
        #expect(harness.monitor.current.verdict.quality?.state == .good)
        let stricter = QualityBudget(latency: .milliseconds(1), window: .seconds(3))
        harness.monitor.reconfigure(.init(targets: [Self.target("server", budget: stricter)]))
        let verdict = harness.monitor.current.verdict
        #expect(verdict.state == .connected && verdict.reason == .healthy)
        #expect(verdict.targets[0].health == .healthy)
        #expect(verdict.targets[0].quality == nil, "judged anew under the new budget")
        #expect(verdict.targets[0].qualityBudget == stricter)
        harness.record(.refused("server"))
        let lost = harness.sequence
        try await waitUntil("the loss's callback ran") { !log.runs.isEmpty }
        #expect(log.runs == [lost], "the reload ran none before it")
        await harness.stop()
    }
}
