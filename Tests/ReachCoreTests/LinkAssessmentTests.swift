import ReachCore
import ReachSupport
import ReachTesting
import Testing

@Suite("The usable-link rule")
struct LinkAssessmentTests {
    let filter = InterfaceFilter()

    @Test func anUpInterfaceWithAddressAndDefaultRouteIsUsable() {
        let assessment = LinkAssessment(.of(.usable("eth0"), .usable("wlan0", index: 3)), filter: filter)
        #expect(assessment.isUsable)
        #expect(assessment.usableInterfaces == ["eth0", "wlan0"])
    }

    @Test func loopbackAloneIsNoLink() {
        #expect(LinkAssessment(.offline, filter: filter).blocker == .noLink)
    }

    @Test func adminDownIsNoLink() {
        let down = InterfaceFacts.usable().with { $0.isAdminUp = false }
        #expect(LinkAssessment(.of(down), filter: filter).blocker == .noLink)
    }

    @Test func carrierLossIsNoLink() {
        #expect(LinkAssessment(.of(InterfaceFacts.usable().withoutCarrier), filter: filter).blocker == .noLink)
    }

    @Test func unknownOperStateCountsOnlyWithLowerUp() {
        let tun = InterfaceFacts.usable("tun0").with { $0.operState = .unknown }
        #expect(LinkAssessment(.of(tun), filter: filter).isUsable)
        #expect(LinkAssessment(.of(tun.with { $0.isLowerUp = false }), filter: filter).blocker == .noLink)
    }

    @Test func carrierWithoutGlobalAddressIsNoAddress() {
        let linkLocalOnly = InterfaceFacts.usable().with {
            $0.addresses = [InterfaceAddress(prefix: IPPrefix("fe80::1/64")!, scope: .link)]
        }
        #expect(LinkAssessment(.of(linkLocalOnly), filter: filter).blocker == .noAddress)
        #expect(LinkAssessment(.of(InterfaceFacts.usable().withoutAddresses), filter: filter).blocker == .noAddress)
    }

    @Test func tentativeAddressesAreNotUsable() {
        let dadPending = InterfaceFacts.usable("eth0", address: "2001:db8::10/64", gateway: "2001:db8::1").with {
            $0.addresses[0].isTentative = true
        }
        #expect(LinkAssessment(.of(dadPending), filter: filter).blocker == .noAddress)
    }

    @Test func addressWithoutDefaultRouteIsNoRoute() {
        #expect(LinkAssessment(.of(InterfaceFacts.usable().withoutDefaultRoute), filter: filter).blocker == .noRoute)
    }

    @Test func aDefaultRouteOfTheOtherFamilyDoesNotCount() {
        let v6AddressV4Route = InterfaceFacts.usable().with {
            $0.addresses = [InterfaceAddress(prefix: IPPrefix("2001:db8::10/64")!, scope: .global)]
        }
        #expect(LinkAssessment(.of(v6AddressV4Route), filter: filter).blocker == .noRoute)
    }

    @Test func aRouteToALiteralTargetAddressReplacesTheDefaultRoute() {
        let isolatedLAN = InterfaceFacts.usable().withoutDefaultRoute
        let onLAN = [IPAddress("192.168.1.50")!]
        let elsewhere = [IPAddress("10.9.9.9")!]
        #expect(LinkAssessment(.of(isolatedLAN), filter: filter, targetAddresses: onLAN).isUsable)
        #expect(LinkAssessment(.of(isolatedLAN), filter: filter, targetAddresses: elsewhere).blocker == .noRoute)
    }

    @Test func theFurthestProgressNamesTheBlocker() {
        let snapshot = LinkSnapshot.of(
            InterfaceFacts.usable("eth0").withoutCarrier,
            InterfaceFacts.usable("wlan0", index: 3).withoutDefaultRoute
        )
        #expect(LinkAssessment(snapshot, filter: filter).blocker == .noRoute)
    }

    @Test func excludedInterfacesDoNotCount() {
        let docker = InterfaceFacts.usable("docker0")
        #expect(LinkAssessment(.of(docker), filter: filter).blocker == .noLink)
        #expect(LinkAssessment(.of(docker), filter: InterfaceFilter(exclude: [])).isUsable)
        #expect(LinkAssessment(.of(.usable("eth0")), filter: InterfaceFilter(include: ["wlan*"])).blocker == .noLink)
    }
}
