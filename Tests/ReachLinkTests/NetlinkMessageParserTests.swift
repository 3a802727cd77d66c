import ReachTesting
import Testing

@testable import ReachLink

/// The parser against real captures (see Fixtures/CapturedNetlink.swift) and hand-built edge cases.
@Suite struct NetlinkMessageParserTests {
    private func parse(_ hex: String) -> NetlinkBatch {
        NetlinkMessageParser.parse(NetlinkBytes.fromHex(hex))
    }

    private func links(_ batch: NetlinkBatch) -> [LinkMessage] {
        batch.messages.compactMap { if case .newLink(let link) = $0.body { link } else { nil } }
    }

    @Test func multipartLinkDumpSpansDatagramsAndEndsWithDone() throws {
        let batches = CapturedNetlink.linkDump.map(parse)
        #expect(batches.count == 3)
        #expect(batches.allSatisfy { $0.problems.isEmpty })
        let messages = batches.flatMap(\.messages)
        #expect(messages.allSatisfy { $0.header.isMultipart && $0.header.sequence == 101 })
        #expect(messages.last?.body == .done(errorCode: 0))
        let all = batches.flatMap(links)
        #expect(all.map(\.name) == ["lo", "rd1", "rd0", "rdbr0", "rdbr1", "rdtun0", "rdmv0", "rdvx0"])
        #expect(all.map(\.linkKind) == [nil, "veth", "veth", "bridge", "bridge", "tun", "macvlan", "vxlan"])
        let loopback = try #require(all.first)
        #expect(loopback.index == 1 && loopback.deviceType == 772 && loopback.operState == 0)
        let rd0 = try #require(all.first { $0.name == "rd0" })
        #expect(rd0.index == 3 && rd0.deviceType == 1 && rd0.operState == 6)
        #expect(rd0.flags & 0x1 != 0 && rd0.flags & 0x10000 != 0)  // IFF_UP, IFF_LOWER_UP
        #expect(all.first { $0.name == "rdtun0" }?.deviceType == 65534)  // ARPHRD_NONE
    }

    @Test func addressDumpCarriesScopeFlagsAndBothFamilies() throws {
        let addresses = CapturedNetlink.addressDump.map(parse).flatMap(\.messages).compactMap {
            if case .newAddress(let address) = $0.body { address } else { nil }
        }
        #expect(addresses.count == 10)
        let v4 = try #require(addresses.first { $0.index == 3 && $0.family == 2 })
        #expect(v4.ownAddress == [198, 51, 100, 2] && v4.prefixLength == 24 && v4.scope == 0)
        let loopback = try #require(addresses.first { $0.index == 1 && $0.family == 2 })
        #expect(loopback.scope == 254)
        // 2001:db8:1::2 on rd1 was still in duplicate address detection: IFA_F_TENTATIVE (0x40).
        let tentative = try #require(addresses.first { $0.index == 2 && $0.family == 10 && $0.scope == 0 })
        #expect(tentative.flags & 0x40 != 0)
        #expect(tentative.local == nil && tentative.address?.count == 16)
    }

    @Test func routeDumpHasDefaultsMultipathAndOtherTables() throws {
        let routes = CapturedNetlink.routeDump.map(parse).flatMap(\.messages).compactMap {
            if case .newRoute(let route) = $0.body { route } else { nil }
        }
        #expect(routes.count == 24)
        let defaultV4 = try #require(routes.first { $0.family == 2 && $0.destinationLength == 0 })
        #expect(defaultV4.destination == nil && defaultV4.table == 254)
        #expect(defaultV4.nextHops == [NextHop(interfaceIndex: 3, gateway: [198, 51, 100, 1])])
        let multipath = try #require(routes.first { $0.destination == [203, 0, 113, 0] })
        #expect(
            multipath.nextHops == [
                NextHop(interfaceIndex: 3, gateway: [198, 51, 100, 1]),
                NextHop(interfaceIndex: 2, gateway: [198, 51, 100, 4]),
            ]
        )
        let defaultV6 = try #require(routes.first { $0.family == 10 && $0.destinationLength == 0 })
        #expect(defaultV6.priority == 1024 && defaultV6.nextHops.first?.gateway?.count == 16)
        #expect(routes.contains { $0.table == 255 && $0.type == 2 })  // local table, RTN_LOCAL
    }

    @Test func errorAndAcknowledgementCarryTheRequestSequence() {
        #expect(
            parse(CapturedNetlink.errorNoDevice[0]).messages.map(\.body) == [
                .error(errorCode: -19, requestSequence: 201)
            ]
        )
        #expect(
            parse(CapturedNetlink.acknowledgement[0]).messages.map(\.body) == [
                .error(errorCode: 0, requestSequence: 202)
            ]
        )
    }

    @Test func eventsParseWithoutProblems() {
        let captures = [
            CapturedNetlink.linkDown, CapturedNetlink.linkUp, CapturedNetlink.peerDown, CapturedNetlink.peerUp,
            CapturedNetlink.addressRemoved, CapturedNetlink.addressAdded, CapturedNetlink.defaultRouteAdded,
            CapturedNetlink.defaultRouteRemoved, CapturedNetlink.renamed, CapturedNetlink.deleted,
        ]
        for datagram in captures.flatMap({ $0 }) {
            let batch = parse(datagram)
            #expect(batch.problems.isEmpty)
            #expect(batch.messages.count == 1)
            #expect(!batch.messages.contains { $0.body == .other })
        }
    }

    @Test func unknownAttributesAndTypeFlagsAreSkipped() throws {
        let original = NetlinkBytes.fromHex(CapturedNetlink.linkDown[0])
        let expected = try #require(NetlinkMessageParser.parse(original).messages.first)
        // Append an attribute type no kernel uses, one with NLA_F_NESTED|NLA_F_NET_BYTEORDER set on an
        // unknown type, and an odd-length one (padding must be honoured).
        var bytes = original
        bytes += NetlinkBytes.attribute(0x3ABC, [1, 2, 3, 4, 5, 6])
        bytes += NetlinkBytes.attribute(0xC000 | 0x3ABD, [9])
        bytes += NetlinkBytes.attribute(0x3ABE, [7, 7, 7])
        NetlinkBytes.store(UInt32(bytes.count), &bytes, 0)
        let batch = NetlinkMessageParser.parse(bytes)
        #expect(batch.problems.isEmpty)
        #expect(batch.messages.map(\.body) == [expected.body])
    }

    @Test func nestedFlagOnAKnownAttributeIsMasked() {
        let linkInfo = NetlinkBytes.attribute(1, NetlinkBytes.cString("veth"))  // IFLA_INFO_KIND
        let body =
            NetlinkBytes.linkHeader(index: 7, flags: 0x1)
            + NetlinkBytes.attribute(3, NetlinkBytes.cString("lo"))  // IFLA_IFNAME, 7 bytes: padded
            + NetlinkBytes.attribute(16, [6])  // IFLA_OPERSTATE
            + NetlinkBytes.attribute(0x8000 | 18, linkInfo)  // NLA_F_NESTED | IFLA_LINKINFO
        let batch = NetlinkMessageParser.parse(NetlinkBytes.message(type: 16, body: body))
        #expect(batch.problems.isEmpty)
        let link = links(batch).first
        #expect(link?.name == "lo" && link?.operState == 6 && link?.linkKind == "veth" && link?.index == 7)
    }

    @Test func everyTruncationOfACaptureKeepsTheWholeMessagesBeforeIt() async {
        await offPool { Self.truncateACapture() }
    }

    private static func truncateACapture() {
        let datagram = NetlinkBytes.fromHex(CapturedNetlink.linkDump[1])
        let offsets = NetlinkBytes.messageOffsets(datagram)
        let full = NetlinkMessageParser.parse(datagram).messages
        for cut in 0..<datagram.count {
            let batch = NetlinkMessageParser.parse(Array(datagram[..<cut]))
            let complete = offsets.filter { offset in
                offset + Int(NetlinkBytes.load(UInt32.self, datagram, offset)) <= cut
            }.count
            #expect(batch.messages == Array(full.prefix(complete)), "cut at \(cut)")
            if !offsets.contains(cut) {
                #expect(!batch.problems.isEmpty, "cut at \(cut) inside a message went unnoticed")
            }
        }
    }

    @Test func lengthsThatCannotBeTrustedStopTheDatagram() {
        let good = NetlinkBytes.fromHex(CapturedNetlink.defaultRouteAdded[0])
        var tooShort = good + good
        NetlinkBytes.store(UInt32(8), &tooShort, good.count)  // nlmsg_len below the header size
        let short = NetlinkMessageParser.parse(tooShort)
        #expect(short.messages.count == 1)
        #expect(short.problems == [.invalidLength(offset: good.count, length: 8)])

        var tooLong = good
        NetlinkBytes.store(UInt32.max, &tooLong, 0)
        #expect(NetlinkMessageParser.parse(tooLong).problems == [.invalidLength(offset: 0, length: UInt32.max)])
        #expect(NetlinkMessageParser.parse([1, 2, 3]).problems == [.truncatedHeader(offset: 0)])
        #expect(NetlinkMessageParser.parse([]) == NetlinkBatch())
    }

    @Test func shortBodiesAreSkippedButTheNextMessageIsRead() {
        let shortLink = NetlinkBytes.message(type: 16, body: [0, 0, 1, 0, 3, 0, 0, 0])  // half an ifinfomsg
        let shortAddress = NetlinkBytes.message(type: 20, body: [2, 24, 0])
        let emptyError = NetlinkBytes.message(type: 2, body: [])
        let emptyDone = NetlinkBytes.message(type: 3, body: [])
        let route = NetlinkBytes.fromHex(CapturedNetlink.defaultRouteAdded[0])
        let batch = NetlinkMessageParser.parse(shortLink + shortAddress + [0] + emptyError + emptyDone + route)
        // shortAddress is 19 bytes: the padding byte after it belongs to its aligned slot.
        #expect(
            batch.problems == [
                .shortBody(offset: 0, type: 16), .shortBody(offset: 24, type: 20), .shortBody(offset: 44, type: 2),
            ]
        )
        #expect(batch.messages.map(\.body).first == .done(errorCode: 0))
        #expect(batch.messages.count == 2)
    }

    @Test func anAttributeRunningPastItsMessageIsReportedAndTheRestIgnored() {
        var body =
            NetlinkBytes.linkHeader(index: 4, flags: 0x1) + NetlinkBytes.attribute(3, NetlinkBytes.cString("rd0"))
        body += NetlinkBytes.integer(UInt16(200)) + NetlinkBytes.integer(UInt16(16)) + [6, 0, 0, 0]
        let batch = NetlinkMessageParser.parse(NetlinkBytes.message(type: 16, body: body))
        #expect(links(batch).first?.name == "rd0")
        #expect(links(batch).first?.operState == nil)
        #expect(batch.problems == [.invalidAttribute(offset: 16 + 16 + 8, type: 16)])
    }

    @Test func multipathEntriesWithBadLengthsStopThere() {
        let hop =
            NetlinkBytes.integer(UInt16(16)) + [0, 0] + NetlinkBytes.integer(UInt32(3))
            + NetlinkBytes.attribute(5, [10, 0, 0, 1])
        let broken = NetlinkBytes.integer(UInt16(4)) + [0, 0] + NetlinkBytes.integer(UInt32(9))
        let body = NetlinkBytes.routeHeader(family: 2, destinationLength: 0) + NetlinkBytes.attribute(9, hop + broken)
        let batch = NetlinkMessageParser.parse(NetlinkBytes.message(type: 24, body: body))
        guard case .newRoute(let route) = batch.messages.first?.body else {
            Issue.record("no route decoded")
            return
        }
        #expect(route.nextHops == [NextHop(interfaceIndex: 3, gateway: [10, 0, 0, 1])])
    }

    @Test func otherMessageTypesAreKeptAsOther() {
        let neighbour = NetlinkBytes.message(type: 28, body: [UInt8](repeating: 0, count: 12))  // RTM_NEWNEIGH
        let noop = NetlinkBytes.message(type: 1, body: [])
        #expect(NetlinkMessageParser.parse(neighbour + noop).messages.map(\.body) == [.other, .other])
    }
}
