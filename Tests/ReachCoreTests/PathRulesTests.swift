import ReachSupport
import ReachTesting
import Testing

@testable import ReachCore

/// The per-uplink and per-family rules: which variants of the targets are probed, and what their
/// results say, without ever changing the verdict's state.
@Suite("Combiner: each uplink and each family")
struct PathRulesTests {
    private static let dualStack = InterfaceFacts.usable("eth0", index: 2).dualStack

    private static func named(_ name: String, host: String = "api.example") -> ProbeTarget {
        .http(name, host: host)
    }

    private static func driver(
        _ targets: [ProbeTarget],
        perInterface: Bool = true,
        policy: TargetPolicy = .all
    ) -> CombinerDriver {
        var driver = CombinerDriver(targets, policy: policy)
        driver.combiner = ConnectivityCombiner(
            targets: targets,
            policy: policy,
            filter: InterfaceFilter(),
            variants: ProbeVariantSettings(perInterface: perInterface),
            now: driver.now
        )
        return driver
    }

    private static func twoUplinks() -> LinkSnapshot {
        .of(.usable("eth0", index: 2), .usable("wwan0", index: 3, address: "10.64.0.2/24", gateway: "10.64.0.1"))
    }

    private static func path(
        _ driver: inout CombinerDriver,
        _ result: ProbeResult,
        _ kind: ProbeVariant.Kind,
        of target: String = "server"
    ) {
        driver.now = driver.now.advanced(by: .seconds(1))
        driver.lastChange = driver.combiner.record(
            result,
            variant: ProbeVariant(target: target, kind: kind),
            epoch: driver.combiner.epoch,
            at: driver.now
        )
    }

    @Test func withTwoUplinksEachTargetIsProbedOutOfEach() {
        var driver = Self.driver([.http("server"), Self.named("api")])
        driver.links(Self.twoUplinks())
        let probes = driver.combiner.variantProbes
        #expect(probes.map(\.name) == ["server@eth0", "server@wwan0", "api@eth0", "api@wwan0"])
        #expect(probes.map(\.interface) == ["eth0", "wwan0", "eth0", "wwan0"])
        #expect(
            probes.allSatisfy { $0.interval == .seconds(1) && $0.timeout == .seconds(2) },
            "the target's own cadence and deadline"
        )
        #expect(driver.verdict.interfaces.map(\.name) == ["eth0", "wwan0"])
        #expect(driver.verdict.interfaces.allSatisfy { $0.reachable == nil })
    }

    @Test func oneUplinkOrTheSettingOffProbesNoUplink() {
        var one = Self.driver([.http("server")])
        one.links(.of(.usable()))
        #expect(one.combiner.variantProbes.isEmpty)
        #expect(one.verdict.interfaces.isEmpty)
        var off = Self.driver([.http("server")], perInterface: false)
        off.links(Self.twoUplinks())
        #expect(off.combiner.variantProbes.isEmpty)
        #expect(off.verdict.interfaces.isEmpty)
    }

    @Test func anUplinkThatFailsIsUnreachableWithTheFirstFailingTargetsReasonAndTheVerdictStaysConnected() {
        var driver = Self.driver([.http("server"), .http("backup", host: "203.0.113.11")])
        driver.links(Self.twoUplinks())
        driver.results(.ok("server"), .ok("backup"))
        #expect(driver.state == .connected)
        Self.path(&driver, .ok("server@eth0", ms: 7), .interface("eth0"))
        Self.path(&driver, .ok("backup@eth0"), .interface("eth0"), of: "backup")
        #expect(
            driver.verdict.interfaces[0]
                == InterfaceReachability(name: "eth0", reachable: true, latency: .milliseconds(7))
        )
        #expect(driver.lastChange.isNews, "an uplink that becomes reachable is news")
        Self.path(
            &driver,
            .failure("server@wwan0", .timeout, phase: .connect, latency: .seconds(2)),
            .interface("wwan0")
        )
        #expect(driver.verdict.interfaces[1].reachable == false, "one failing target is enough under `all`")
        #expect(driver.verdict.interfaces[1].reason == .timeout)
        #expect(driver.verdict.interfaces[1].fault == .server)
        #expect(driver.lastChange.isNews)
        #expect(!driver.lastChange.isHeadline, "the verdict's headline does not move")
        #expect(driver.state == .connected, "the verdict follows the routes, not the uplinks")
        Self.path(&driver, .ok("server@eth0", ms: 9), .interface("eth0"))
        #expect(driver.verdict.interfaces[0].latency == .milliseconds(9))
        #expect(!driver.lastChange.isNews, "a new latency alone is not news")
    }

    @Test func anUplinksDNSFailureIsItsDNSFault() {
        var driver = Self.driver([.http("server")])
        driver.links(Self.twoUplinks())
        Self.path(
            &driver,
            .failure("server@eth0", .dnsFailure, phase: .dns, latency: .milliseconds(3)),
            .interface("eth0")
        )
        #expect(driver.verdict.interfaces[0].fault == .dns)
    }

    @Test func anUplinkFollowsTheTargetsHysteresis() {
        var driver = Self.driver([.http("server", hysteresis: Hysteresis(failuresBeforeDown: 2))])
        driver.links(Self.twoUplinks())
        Self.path(&driver, .ok("server@eth0"), .interface("eth0"))
        Self.path(&driver, .refused("server@eth0"), .interface("eth0"))
        #expect(driver.verdict.interfaces[0].reachable == true, "one failure is not yet two")
        Self.path(&driver, .refused("server@eth0"), .interface("eth0"))
        #expect(driver.verdict.interfaces[0].reachable == false)
        #expect(driver.verdict.interfaces[0].reason == .connectionRefused)
    }

    @Test func aRefusedBindingLeavesTheUplinkUnknown() {
        var driver = Self.driver([.http("server")])
        driver.links(Self.twoUplinks())
        Self.path(
            &driver,
            ProbeResult(
                target: "server@eth0",
                failure: ProbeFailure(.cancelled, detail: ProbeFailure.bindingRefused),
                timings: ProbeTimings(total: .zero)
            ),
            .interface("eth0")
        )
        #expect(!driver.lastChange.accepted)
        #expect(driver.verdict.interfaces[0].reachable == nil)
    }

    @Test func anUplinkThatGoesAwayIsForgottenAndItsResultsDropped() {
        var driver = Self.driver([.http("server")])
        driver.links(Self.twoUplinks())
        Self.path(&driver, .ok("server@wwan0"), .interface("wwan0"))
        driver.links(.of(.usable("eth0", index: 2)))
        #expect(driver.verdict.interfaces.isEmpty, "one uplink left: nothing to compare")
        #expect(driver.combiner.variantProbes.isEmpty)
        Self.path(&driver, .ok("server@wwan0"), .interface("wwan0"))
        #expect(!driver.lastChange.accepted)
    }

    @Test func losingTheLinkResetsTheUplinks() {
        var driver = Self.driver([.http("server")])
        driver.links(Self.twoUplinks())
        Self.path(&driver, .ok("server@eth0"), .interface("eth0"))
        driver.links(.offline)
        driver.links(Self.twoUplinks())
        #expect(
            driver.verdict.interfaces.map(\.reachable) == [nil, nil],
            "what an uplink said before the link loss is no evidence now"
        )
    }

    @Test func aDualStackNameIsCheckedOverEachFamilyEveryTenthInterval() {
        var driver = Self.driver(
            [Self.named("api"), .http("literal"), .http("local", host: "127.0.0.1")],
            perInterface: false
        )
        driver.links(.of(Self.dualStack))
        let probes = driver.combiner.variantProbes
        #expect(
            probes.map(\.name) == ["api%ipv4", "api%ipv6"],
            "a literal address has one family; loopback has no path"
        )
        #expect(probes.map(\.addressFamily) == [.ipv4, .ipv6])
        #expect(probes.allSatisfy { $0.interval == .seconds(10) && $0.timeout == .seconds(2) })
    }

    @Test func anIPv4OnlyHostChecksNoFamily() {
        var driver = Self.driver([Self.named("api")], perInterface: false)
        driver.links(.of(.usable()))
        #expect(driver.combiner.variantProbes.isEmpty)
    }

    @Test func aBrokenFamilyIsDegradedWhileTheOtherAnswersAndTheVerdictStaysConnected() {
        var driver = Self.driver([Self.named("api")], perInterface: false)
        driver.links(.of(Self.dualStack))
        driver.result(.ok("api"))
        Self.path(&driver, .ok("api%ipv4"), .family(.ipv4), of: "api")
        Self.path(
            &driver,
            .failure("api%ipv6", .timeout, phase: .connect, latency: .seconds(2)),
            .family(.ipv6),
            of: "api"
        )
        let status = driver.verdict.targets[0]
        #expect(status.families == [.ipv4, .ipv6])
        #expect(status.answeredFamilies == [.ipv4])
        #expect(status.degradedFamilies == [.ipv6])
        #expect(driver.verdict.degradedFamilies == [.ipv6])
        #expect(driver.lastChange.isNews)
        #expect(driver.state == .connected)
        Self.path(&driver, .ok("api%ipv6"), .family(.ipv6), of: "api")
        #expect(driver.verdict.degradedFamilies.isEmpty)
        #expect(driver.verdict.targets[0].answeredFamilies == [.ipv4, .ipv6])
    }

    @Test func bothFamiliesFailingIsNoDegradedFamily() {
        var driver = Self.driver([Self.named("api")], perInterface: false)
        driver.links(.of(Self.dualStack))
        Self.path(&driver, .refused("api%ipv4"), .family(.ipv4), of: "api")
        Self.path(&driver, .refused("api%ipv6"), .family(.ipv6), of: "api")
        #expect(driver.verdict.degradedFamilies.isEmpty, "the target is down: the verdict says so, not a family")
    }

    @Test func aFamilyTheNameHasNoAddressOfIsNotChecked() {
        var driver = Self.driver([Self.named("api")], perInterface: false)
        driver.links(.of(Self.dualStack))
        Self.path(&driver, .ok("api%ipv4"), .family(.ipv4), of: "api")
        let noAAAA = ProbeResult(
            target: "api%ipv6",
            failure: ProbeFailure(.networkUnreachable, phase: .connect, detail: ProbeFailure.noAddressOfFamily),
            timings: ProbeTimings(total: .milliseconds(1))
        )
        Self.path(&driver, noAAAA, .family(.ipv6), of: "api")
        #expect(driver.verdict.targets[0].families == [.ipv4])
        #expect(driver.verdict.degradedFamilies.isEmpty)
    }
}
