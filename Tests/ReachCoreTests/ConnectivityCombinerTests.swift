import ReachSupport
import ReachTesting
import Testing

@testable import ReachCore

/// Drives a combiner through inputs at a fixed wall time, keeping the last change.
struct CombinerDriver {
    var combiner: ConnectivityCombiner
    var lastChange = ConnectivityCombiner.Change()
    var now = WallTime(sinceEpoch: .seconds(1_000))

    init(_ targets: [ProbeTarget] = [.http("server")], policy: TargetPolicy = .all) {
        combiner = ConnectivityCombiner(targets: targets, policy: policy, filter: InterfaceFilter(), now: now)
    }

    var verdict: Verdict { combiner.verdict }
    var state: ConnectivityState { combiner.verdict.state }
    var reason: VerdictReason { combiner.verdict.reason }

    mutating func links(_ snapshot: LinkSnapshot) {
        now = now.advanced(by: .seconds(1))
        lastChange = combiner.apply(links: snapshot, at: now)
    }

    mutating func result(_ result: ProbeResult, epoch: ProbeEpoch? = nil) {
        now = now.advanced(by: .seconds(1))
        lastChange = combiner.record(result, epoch: epoch ?? combiner.epoch, at: now)
    }

    mutating func results(_ results: ProbeResult...) {
        for result in results { self.result(result) }
    }

    mutating func sleeping(_ sleeping: Bool) {
        lastChange = combiner.setSleeping(sleeping, at: now)
    }
}

@Suite("Combiner: link and probe transitions")
struct CombinerTransitionTests {
    @Test func startsUnknownAndStarting() {
        let driver = CombinerDriver()
        #expect(driver.state == .unknown)
        #expect(driver.reason == .starting)
        #expect(driver.verdict.targets.map(\.health) == [.unknown])
        #expect(!driver.combiner.probeControl.isSuspended)
    }

    @Test func aUsableLinkAloneIsNotYetConnected() {
        var driver = CombinerDriver()
        driver.links(.of(.usable()))
        #expect(driver.state == .unknown)
        #expect(driver.reason == .awaitingProbe)
        #expect(driver.verdict.usableInterfaces == ["eth0"])
        #expect(driver.lastChange.isNews)
    }

    @Test func firstSuccessConnectsWithoutATransition() {
        var driver = CombinerDriver()
        driver.links(.of(.usable()))
        driver.result(.ok("server"))
        #expect(driver.state == .connected)
        #expect(driver.reason == .healthy)
        #expect(driver.lastChange.isNews)
        #expect(driver.lastChange.transition == nil, "leaving unknown is not a restoration")
        #expect(driver.verdict.since == driver.now)
    }

    @Test func firstFailureDisconnectsWithTheTargetsReason() {
        var driver = CombinerDriver()
        driver.links(.of(.usable()))
        driver.result(.refused("server"))
        #expect(driver.state == .disconnected)
        #expect(driver.reason == .targetFailed(target: "server", reason: .connectionRefused))
        #expect(driver.reason.code == "connection_refused")
        #expect(driver.lastChange.transition == nil)
    }

    @Test func probeFailureAndRecoveryAreTransitions() {
        var driver = CombinerDriver()
        driver.links(.of(.usable()))
        driver.result(.ok("server"))
        driver.result(.failure("server", .httpStatus(503), latency: .milliseconds(3)))
        #expect(driver.state == .disconnected)
        #expect(driver.reason == .targetFailed(target: "server", reason: .httpStatus(503)))
        #expect(driver.lastChange.transition == .lost)
        driver.result(.ok("server"))
        #expect(driver.state == .connected)
        #expect(driver.lastChange.transition == .restored)
    }

    @Test(arguments: [
        (InterfaceFacts.usable().withoutCarrier, VerdictReason.noLink),
        (InterfaceFacts.usable().withoutAddresses, VerdictReason.noAddress),
        (InterfaceFacts.usable().withoutDefaultRoute, VerdictReason.noRoute),
    ])
    func losingTheLinkDisconnectsAtOnceWithTheLinkReason(after: InterfaceFacts, reason: VerdictReason) {
        var driver = CombinerDriver()
        driver.links(.of(.usable()))
        driver.result(.ok("server"))
        let epochBefore = driver.combiner.epoch
        driver.links(.of(after))
        #expect(driver.state == .disconnected)
        #expect(driver.reason == reason)
        #expect(driver.lastChange.transition == .lost)
        #expect(driver.combiner.epoch > epochBefore)
        #expect(driver.combiner.probeControl.suspension == .noUsableLink)
        #expect(driver.lastChange.probeControlChanged)
    }

    @Test func regainingTheLinkResetsTargetsAndAsksForAProbe() {
        var driver = CombinerDriver()
        driver.links(.of(.usable()))
        driver.result(.ok("server"))
        driver.links(.offline)
        let requests = driver.combiner.probeControl.immediateProbeRequests
        driver.links(.of(.usable()))
        #expect(driver.state == .disconnected)
        #expect(driver.reason == .awaitingProbe)
        #expect(driver.verdict.targets[0].health == .unknown)
        #expect(driver.verdict.targets[0].lastResult != nil, "the last result stays for display")
        #expect(driver.combiner.probeControl == ProbeControl(suspension: nil, immediateProbeRequests: requests + 1))
        #expect(driver.lastChange.transition == nil)
        driver.result(.ok("server"))
        #expect(driver.state == .connected)
        #expect(driver.lastChange.transition == .restored)
    }

    @Test func aProbeInFlightAcrossALinkLossIsDropped() {
        var driver = CombinerDriver()
        driver.links(.of(.usable()))
        driver.result(.ok("server"))
        let inFlight = driver.combiner.epoch
        driver.links(.offline)
        driver.result(.ok("server"), epoch: inFlight)
        #expect(!driver.lastChange.accepted)
        #expect(driver.state == .disconnected)
        driver.links(.of(.usable()))
        driver.result(.ok("server"), epoch: inFlight)
        #expect(!driver.lastChange.accepted, "a result from before the loss must not restore connectivity")
        #expect(driver.state == .disconnected)
        #expect(driver.reason == .awaitingProbe)
        driver.result(.ok("server"))
        #expect(driver.state == .connected)
    }

    @Test func resultsWhileTheLinkIsDownAreDropped() {
        var driver = CombinerDriver()
        driver.links(.offline)
        driver.result(.ok("server"))
        #expect(!driver.lastChange.accepted)
        #expect(driver.state == .disconnected)
        #expect(driver.reason == .noLink)
    }

    @Test func resultsForUnknownTargetsAreDropped() {
        var driver = CombinerDriver()
        driver.result(.ok("nobody"))
        #expect(!driver.lastChange.accepted)
        #expect(driver.state == .unknown)
    }

    @Test func withoutALinkSourceProbesAloneDecide() {
        var driver = CombinerDriver()
        driver.result(.ok("server"))
        #expect(driver.state == .connected)
        #expect(driver.verdict.usableInterfaces.isEmpty)
    }

    @Test func loopbackTargetsDoNotNeedALink() {
        var driver = CombinerDriver([ProbeTarget(name: "local", check: .tcp(HostPort(host: "127.0.0.1", port: 8080)))])
        driver.links(.offline)
        #expect(!driver.combiner.probeControl.isSuspended)
        driver.result(.ok("local"))
        #expect(driver.state == .connected)
    }

    @Test func churnOnAUsableLinkAsksForAProbeWithoutDroppingInFlightResults() {
        var driver = CombinerDriver()
        driver.links(.of(.usable()))
        driver.result(.ok("server"))
        let epoch = driver.combiner.epoch
        let requests = driver.combiner.probeControl.immediateProbeRequests
        driver.links(
            .of(
                InterfaceFacts.usable().with {
                    $0.addresses.append(InterfaceAddress(prefix: IPPrefix("192.168.1.11/24")!, scope: .global))
                }
            )
        )
        #expect(driver.combiner.probeControl.immediateProbeRequests == requests + 1)
        #expect(driver.combiner.epoch == epoch)
        #expect(driver.state == .connected)
        #expect(!driver.lastChange.isNews)
        driver.links(
            .of(
                InterfaceFacts.usable().with {
                    $0.addresses.append(InterfaceAddress(prefix: IPPrefix("192.168.1.11/24")!, scope: .global))
                },
                InterfaceFacts.usable("docker0", index: 9)
            )
        )
        #expect(
            driver.combiner.probeControl.immediateProbeRequests == requests + 1,
            "excluded interfaces are not churn"
        )
    }

    @Test func latencyAloneIsNotNews() {
        var driver = CombinerDriver()
        driver.result(.ok("server", ms: 5))
        driver.result(.ok("server", ms: 900))
        #expect(!driver.lastChange.isNews)
        #expect(driver.verdict.targets[0].lastResult?.latency == .milliseconds(900))
    }

    @Test func aDifferentFailureReasonIsNews() {
        var driver = CombinerDriver()
        driver.result(.refused("server"))
        driver.result(.failure("server", .timeout, phase: .connect, latency: .seconds(2)))
        #expect(driver.lastChange.isNews)
        #expect(driver.reason == .targetFailed(target: "server", reason: .timeout))
        #expect(driver.lastChange.transition == nil)
    }

    @Test func sleepSuspendsDropsInFlightResultsAndWakingProbes() {
        var driver = CombinerDriver()
        driver.links(.of(.usable()))
        driver.result(.ok("server"))
        let beforeSleep = driver.combiner.epoch
        driver.sleeping(true)
        #expect(driver.combiner.probeControl.suspension == .systemSleeping)
        #expect(driver.state == .connected, "sleeping alone says nothing about the network")
        driver.result(.refused("server"), epoch: beforeSleep)
        #expect(!driver.lastChange.accepted)
        let requests = driver.combiner.probeControl.immediateProbeRequests
        driver.sleeping(false)
        #expect(driver.combiner.probeControl == ProbeControl(suspension: nil, immediateProbeRequests: requests + 1))
        #expect(driver.reason == .awaitingProbe, "what the server said before the sleep is no evidence after it")
        #expect(driver.state != .connected)
        driver.result(.ok("server"))
        #expect(driver.state == .connected)
        driver.sleeping(false)
        #expect(!driver.lastChange.accepted, "a repeated wake is not news")
    }

    @Test func whenTheLinkSourceDiesProbesAloneDecide() {
        var driver = CombinerDriver()
        driver.links(.offline)
        #expect(driver.reason == .noLink)
        let requests = driver.combiner.probeControl.immediateProbeRequests
        driver.lastChange = driver.combiner.forgetLinks(at: WallTime(sinceEpoch: .seconds(1)))
        #expect(driver.combiner.probeControl == ProbeControl(suspension: nil, immediateProbeRequests: requests + 1))
        #expect(driver.reason == .awaitingProbe)
        driver.result(.ok("server"))
        #expect(driver.state == .connected)
        driver.result(.refused("server"))
        #expect(driver.state == .disconnected)
    }

    @Test func aCancelledProbeIsNoEvidence() {
        var driver = CombinerDriver()
        driver.links(.of(.usable()))
        driver.result(.ok("server"))
        driver.result(.failure("server", .cancelled, phase: .connect, latency: .milliseconds(3)))
        #expect(!driver.lastChange.accepted)
        #expect(driver.state == .connected, "stopping reachd mid-probe is not a disconnection")
    }

    @Test func sleepOutranksALinkLossAsTheSuspensionReason() {
        var driver = CombinerDriver()
        driver.links(.offline)
        driver.sleeping(true)
        #expect(driver.combiner.probeControl.suspension == .systemSleeping)
        driver.sleeping(false)
        #expect(driver.combiner.probeControl.suspension == .noUsableLink)
    }
}

@Suite("Combiner: hysteresis")
struct CombinerHysteresisTests {
    @Test func failuresBeforeDownHoldsAHealthyTargetUpToTheEdge() {
        var driver = CombinerDriver([.http("server", hysteresis: Hysteresis(failuresBeforeDown: 3))])
        driver.result(.ok("server"))
        driver.results(.refused("server"), .refused("server"))
        #expect(driver.state == .connected)
        #expect(driver.verdict.targets[0].consecutiveFailures == 2)
        driver.result(.refused("server"))
        #expect(driver.state == .disconnected)
        #expect(driver.lastChange.transition == .lost)
    }

    @Test func aSuccessRestartsTheFailureCount() {
        var driver = CombinerDriver([.http("server", hysteresis: Hysteresis(failuresBeforeDown: 2))])
        driver.results(.ok("server"), .refused("server"), .ok("server"), .refused("server"))
        #expect(driver.state == .connected)
        driver.result(.refused("server"))
        #expect(driver.state == .disconnected)
    }

    @Test func successesBeforeUpHoldsAnUnhealthyTargetDownAndKeepsItsReason() {
        var driver = CombinerDriver([.http("server", hysteresis: Hysteresis(successesBeforeUp: 3))])
        driver.result(
            .failure("server", .tlsFailure, phase: .tls, detail: "certificate expired", latency: .milliseconds(4))
        )
        driver.results(.ok("server"), .ok("server"))
        #expect(driver.state == .disconnected)
        #expect(driver.reason == .targetFailed(target: "server", reason: .tlsFailure))
        #expect(driver.verdict.targets[0].lastFailure?.detail == "certificate expired")
        driver.result(.ok("server"))
        #expect(driver.state == .connected)
        #expect(
            driver.lastChange.transition == .restored,
            "unknown → disconnected was no transition; disconnected → connected is"
        )
    }

    @Test func fromUnknownTheFirstResultDecidesWhateverTheDamping() {
        var up = CombinerDriver([.http("server", hysteresis: Hysteresis(failuresBeforeDown: 5, successesBeforeUp: 5))])
        up.result(.ok("server"))
        #expect(up.state == .connected)
        var down = CombinerDriver([.http("server", hysteresis: Hysteresis(failuresBeforeDown: 5, successesBeforeUp: 5))]
        )
        down.result(.refused("server"))
        #expect(down.state == .disconnected)
    }

    @Test func theDampingStartsAfreshOnALinkRegained() {
        var driver = CombinerDriver([.http("server", hysteresis: Hysteresis(failuresBeforeDown: 3))])
        driver.links(.of(.usable()))
        driver.results(.ok("server"), .refused("server"), .refused("server"))
        driver.links(.offline)
        driver.links(.of(.usable()))
        #expect(driver.verdict.targets[0].consecutiveFailures == 0)
        driver.result(.refused("server"))
        #expect(driver.state == .disconnected, "from unknown, one failure decides")
    }
}

@Suite("Combiner: target policies")
struct CombinerPolicyTests {
    static let names = ["a", "b", "c", "d", "e"]

    /// Feeds one result per target: true = success.
    static func verdict(_ policy: TargetPolicy, _ outcomes: [Bool?]) -> (ConnectivityState, VerdictReason) {
        var driver = CombinerDriver(names.prefix(outcomes.count).map { .http($0) }, policy: policy)
        for (name, outcome) in zip(names, outcomes) {
            guard let outcome else { continue }
            driver.result(outcome ? .ok(name) : .refused(name))
        }
        return (driver.state, driver.reason)
    }

    @Test func allNeedsEveryTarget() {
        #expect(Self.verdict(.all, [true, true, true]).0 == .connected)
        #expect(
            Self.verdict(.all, [true, false, true]) == (
                .disconnected, .targetFailed(target: "b", reason: .connectionRefused)
            )
        )
        #expect(Self.verdict(.all, [true, nil, true]) == (.unknown, .awaitingProbe))
        #expect(
            Self.verdict(.all, [nil, false, nil]).0 == .disconnected,
            "one failure fails `all` without waiting for the rest"
        )
    }

    @Test func anyNeedsOneTarget() {
        #expect(Self.verdict(.any, [false, false, true]).0 == .connected)
        #expect(Self.verdict(.any, [true, nil, nil]).0 == .connected)
        #expect(
            Self.verdict(.any, [false, false, false]) == (
                .disconnected, .targetFailed(target: "a", reason: .connectionRefused)
            )
        )
        #expect(Self.verdict(.any, [false, nil, false]).0 == .unknown)
    }

    @Test(
        arguments: [
            // k, outcomes, expected state
            (2, [true, true, false, false, false], ConnectivityState.connected),
            (2, [true, false, false, false, false], .disconnected),
            (3, [true, true, nil, false, false], .unknown),
            (3, [true, true, false, false, false], .disconnected),
            (5, [true, true, true, true, true], .connected),
            (5, [true, true, true, true, false], .disconnected),
            (1, [false, false, false, false, true], .connected),
            (1, [false, false, false, false, false], .disconnected),
            (4, [true, true, true, nil, nil], .unknown),
            (4, [true, true, true, nil, false], .unknown),
            (4, [true, true, nil, false, false], .disconnected),
        ] as [(Int, [Bool?], ConnectivityState)]
    )
    func quorumEdges(k: Int, outcomes: [Bool?], expected: ConnectivityState) {
        #expect(Self.verdict(.quorum(k), outcomes).0 == expected)
    }

    @Test func theReasonNamesTheFirstFailingTargetInConfigurationOrder() {
        #expect(
            Self.verdict(.quorum(3), [true, false, true, false, false]).1
                == .targetFailed(target: "b", reason: .connectionRefused)
        )
    }
}
