import ReachCore
import ReachSupport
import Testing

@testable import ReachLink

/// The table built from real captured dumps and events.
@Suite struct InterfaceTableTests {
    private let filter = InterfaceFilter(include: ["rd0"], exclude: [])

    @Test func dumpsBuildTheWholePicture() throws {
        let snapshot = CapturedState.loadedTable().snapshot()
        #expect(snapshot.interfaces.map(\.name) == ["lo", "rd1", "rd0", "rdbr0", "rdbr1", "rdtun0", "rdmv0", "rdvx0"])
        #expect(snapshot.interfaces.map(\.index) == Array(1...8))
        let lo = try #require(snapshot[name: "lo"])
        #expect(lo.kind == .loopback && lo.operState == .unknown && lo.isLowerUp)
        let rd0 = try #require(snapshot[name: "rd0"])
        #expect(rd0.kind == .virtual && rd0.linkKind == "veth")
        #expect(rd0.isAdminUp && rd0.isLowerUp && rd0.operState == .up && rd0.hasCarrier)
        #expect(
            rd0.addresses.map(\.prefix.description) == [
                "198.51.100.2/24", "2001:db8::2/64", "fe80::404e:f0ff:fe64:b97b/64",
            ]
        )
        #expect(rd0.addresses.map(\.scope) == [.global, .global, .link])
        #expect(
            Set(rd0.routes.map { "\($0.destination) \($0.gateway.map(String.init(describing:)) ?? "-")" }) == [
                "0.0.0.0/0 198.51.100.1", "198.51.100.0/24 -", "203.0.113.0/24 198.51.100.1",
                "2001:db8::/64 -", "fe80::/64 -", "::/0 2001:db8::1",
            ]
        )
        #expect(rd0.defaultRouteFamilies == [.ipv4, .ipv6])
        let rd1 = try #require(snapshot[name: "rd1"])
        #expect(rd1.addresses.first { $0.prefix.description == "2001:db8:1::2/64" }?.isTentative == true)
        // The multipath route's second hop leaves through rd1; local-table routes are not listed.
        #expect(
            rd1.routes.contains {
                $0.destination.description == "203.0.113.0/24" && $0.gateway?.description == "198.51.100.4"
            }
        )
        #expect(!rd1.routes.contains { $0.destination.length == 32 })
        #expect(snapshot[name: "rdbr0"]?.linkKind == "bridge")
        #expect(snapshot[name: "rdtun0"]?.kind == .virtual)
        #expect(LinkAssessment(snapshot, filter: filter).isUsable)
    }

    @Test func linkDownIsALossAndItsRoutesGoOnlyWithTheRouteDump() throws {
        var table = CapturedState.loadedTable()
        let changes = CapturedState.batches(CapturedNetlink.linkDown).flatMap(\.messages).reduce(TableChanges()) {
            $0.union(table.apply($1))
        }
        #expect(changes.contains(.linkState))
        let rd0 = try #require(table.snapshot()[name: "rd0"])
        #expect(!rd0.isAdminUp && rd0.operState == .down)
        #expect(!LinkAssessment(table.snapshot(), filter: filter).isUsable)
        // The kernel announced the IPv6 removals but flushed the IPv4 routes silently.
        #expect(rd0.routes.map(\.destination.family) == [.ipv4, .ipv4, .ipv4])
        #expect(table.snapshot()[name: "rd1"]?.operState == .lowerLayerDown)

        // A route dump that no longer mentions them reconciles the table.
        table.beginDump(.routes)
        _ = table.endDump(.routes, consistent: true)
        #expect(table.snapshot()[name: "rd0"]?.routes == [])
    }

    @Test func linkUpTakesTwoMessagesAndThenCarrier() throws {
        var table = CapturedState.loadedTable()
        CapturedState.apply(CapturedNetlink.linkDown, to: &table)
        let messages = CapturedState.batches(CapturedNetlink.linkUp).flatMap(\.messages)
        let firstLink = try #require(messages.firstIndex { if case .newLink = $0.body { true } else { false } })
        table.apply(messages[firstLink])
        let early = try #require(table.snapshot()[name: "rd0"])
        #expect(early.isAdminUp)
        for message in messages[(firstLink + 1)...] { table.apply(message) }
        let rd0 = try #require(table.snapshot()[name: "rd0"])
        #expect(rd0.isAdminUp && rd0.isLowerUp && rd0.operState == .up)
    }

    @Test func peerDownMeansNoCarrierOnOurSide() throws {
        var table = CapturedState.loadedTable()
        CapturedState.apply(CapturedNetlink.peerDown, to: &table)
        let rd0 = try #require(table.snapshot()[name: "rd0"])
        #expect(rd0.isAdminUp && !rd0.isLowerUp && rd0.operState == .lowerLayerDown && !rd0.hasCarrier)
        #expect(LinkAssessment(table.snapshot(), filter: filter).blocker == .noLink)
        CapturedState.apply(CapturedNetlink.peerUp, to: &table)
        #expect(table.snapshot()[name: "rd0"]?.hasCarrier == true)
    }

    @Test func addressRemovalAndReturn() throws {
        var table = CapturedState.loadedTable()
        let changes = CapturedState.batches(CapturedNetlink.addressRemoved).flatMap(\.messages).reduce(TableChanges()) {
            $0.union(table.apply($1))
        }
        #expect(changes.contains(.addressRemoved))
        #expect(table.snapshot()[name: "rd0"]?.usableAddressFamilies == [.ipv6])
        CapturedState.apply(CapturedNetlink.addressAdded, to: &table)
        #expect(table.snapshot()[name: "rd0"]?.usableAddressFamilies == [.ipv4, .ipv6])
    }

    @Test func defaultRouteRemovalAndAddition() throws {
        var table = CapturedState.loadedTable()
        CapturedState.apply(CapturedNetlink.defaultRouteRemoved, to: &table)
        #expect(table.snapshot()[name: "rd0"]?.defaultRouteFamilies == [.ipv6])
        CapturedState.apply(CapturedNetlink.defaultRouteAdded, to: &table)
        #expect(table.snapshot()[name: "rd0"]?.defaultRouteFamilies == [.ipv4, .ipv6])
    }

    @Test func renameKeepsTheIndexAndDeletionDropsEverything() throws {
        var table = CapturedState.loadedTable()
        CapturedState.apply(CapturedNetlink.renamed, to: &table)
        #expect(table.snapshot()[name: "rdbr1"] == nil)
        #expect(table.snapshot()[name: "rdbr9"]?.index == 5)
        CapturedState.apply(CapturedNetlink.deleted, to: &table)
        #expect(table.snapshot()[name: "rdbr9"] == nil)
        #expect(!table.snapshot().interfaces.contains { $0.index == 5 })
    }

    @Test func bridgePortMessagesAreNotDeviceEvents() {
        var table = CapturedState.loadedTable()
        let before = table.snapshot()
        // AF_BRIDGE (7) RTM_DELLINK: rd0 left a bridge; the device still exists.
        let portLeft = NetlinkBytes.message(
            type: 17,
            body: NetlinkBytes.linkHeader(family: 7, index: 3, flags: 0)
                + NetlinkBytes.attribute(3, NetlinkBytes.cString("rd0"))
        )
        CapturedState.apply([NetlinkBytes.hex(portLeft)], to: &table)
        #expect(table.snapshot() == before)
    }

    @Test func partialLinkNotificationsUpdateFlagsOnly() throws {
        var table = CapturedState.loadedTable()
        // A wireless-extension event: ifinfomsg plus IFLA_WIRELESS, no name, no operstate.
        let wireless = NetlinkMessage(
            header: NetlinkHeader(length: 0, type: 16, flags: 0, sequence: 0, portID: 0),
            body: .newLink(
                LinkMessage(
                    family: 0,
                    index: 3,
                    deviceType: 1,
                    flags: 0x11043,
                    name: nil,
                    operState: nil,
                    linkKind: nil,
                    hasWirelessAttribute: true
                )
            )
        )
        table.apply(wireless)
        let rd0 = try #require(table.snapshot()[name: "rd0"])
        #expect(rd0.name == "rd0" && rd0.operState == .up && rd0.linkKind == "veth")
        #expect(rd0.kind == .wifi)
        // The same for an unknown index: nothing to build an entry from.
        table.apply(
            NetlinkMessage(
                header: wireless.header,
                body: .newLink(
                    LinkMessage(
                        family: 0,
                        index: 42,
                        deviceType: 1,
                        flags: 0x1,
                        name: nil,
                        operState: nil,
                        linkKind: nil,
                        hasWirelessAttribute: true
                    )
                )
            )
        )
        #expect(!table.snapshot().interfaces.contains { $0.index == 42 })
    }

    @Test func consistentDumpsDropWhatTheyDidNotMentionInconsistentOnesDoNot() {
        var table = CapturedState.loadedTable()
        let linkMessages = CapturedState.batches(CapturedNetlink.linkDump).flatMap(\.messages)
        let withoutRd1 = linkMessages.filter {
            if case .newLink(let link) = $0.body { link.name != "rd1" } else { true }
        }
        table.beginDump(.links)
        for message in withoutRd1 { table.apply(message) }
        _ = table.endDump(.links, consistent: false)
        #expect(table.snapshot()[name: "rd1"] != nil)

        table.beginDump(.links)
        for message in withoutRd1 { table.apply(message) }
        let changes = table.endDump(.links, consistent: true)
        #expect(changes.contains(.linkState))
        #expect(table.snapshot()[name: "rd1"] == nil)
        // rd1's addresses and the multipath hop through it went with it.
        #expect(!table.snapshot().interfaces.flatMap(\.routes).contains { $0.gateway?.description == "198.51.100.4" })
    }

    @Test func eventsDuringADumpCountAsMentioned() {
        var table = CapturedState.loadedTable()
        table.beginDump(.routes)
        CapturedState.apply(CapturedNetlink.defaultRouteAdded, to: &table)  // a NEWROUTE event mid-dump
        _ = table.endDump(.routes, consistent: true)
        #expect(table.snapshot()[name: "rd0"]?.routes.map(\.destination.description) == ["0.0.0.0/0"])
    }

    @Test func routeReplacementDropsTheOldNextHop() throws {
        var table = CapturedState.loadedTable()
        let replacement = NetlinkBytes.message(
            type: 24,
            flags: 0x100,  // NLM_F_REPLACE
            body: NetlinkBytes.routeHeader(family: 2, destinationLength: 0)
                + NetlinkBytes.attribute(5, [198, 51, 100, 9])
                + NetlinkBytes.attribute(4, NetlinkBytes.integer(UInt32(3)))
        )
        for message in NetlinkMessageParser.parse(replacement).messages { table.apply(message) }
        let defaults = try #require(table.snapshot()[name: "rd0"]).routes.filter {
            $0.destination.isDefault && $0.destination.family == .ipv4
        }
        #expect(defaults.map { $0.gateway?.description } == ["198.51.100.9"])
    }

    @Test func impossibleAddressesAndRoutesAreRejectedNotTrusted() {
        var table = CapturedState.loadedTable()
        let before = table.snapshot()
        let badAddress = NetlinkBytes.message(
            type: 20,
            body: NetlinkBytes.addressHeader(family: 2, prefixLength: 40, index: 3)
                + NetlinkBytes.attribute(2, [10, 0, 0, 1])
        )
        let wrongLength = NetlinkBytes.message(
            type: 20,
            body: NetlinkBytes.addressHeader(family: 2, prefixLength: 8, index: 3)
                + NetlinkBytes.attribute(2, [10, 0, 0])
        )
        let badRoute = NetlinkBytes.message(
            type: 24,
            body: NetlinkBytes.routeHeader(family: 2, destinationLength: 33)
                + NetlinkBytes.attribute(4, NetlinkBytes.integer(UInt32(3)))
        )
        for message in NetlinkMessageParser.parse(badAddress + wrongLength + badRoute).messages { table.apply(message) }
        #expect(table.snapshot() == before)
        #expect(table.rejectedCount == 3)
    }
}
