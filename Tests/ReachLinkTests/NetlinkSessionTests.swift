import InMemoryLogging
import Logging
import ReachCore
import Testing

@testable import ReachLink

/// The adapter's decisions, driven with real captures readdressed as replies to the session's own dumps.
@Suite struct NetlinkSessionTests {
    private static let portID: UInt32 = 4242
    private let filter = InterfaceFilter(include: ["rd0"], exclude: [])

    private func makeSession(logger: Logger = Logger(label: "test")) -> NetlinkSession {
        NetlinkSession(kindProbe: CapturedState.fakeProbe, portID: Self.portID, logger: logger)
    }

    /// Feeds a captured dump as the reply to `request`, returning every action it caused.
    private func reply(
        _ capture: [String],
        to request: NetlinkSession.Action?,
        in session: inout NetlinkSession
    ) throws -> [NetlinkSession.Action] {
        guard case .requestDump(_, let sequence)? = request else {
            Issue.record("expected a dump request, got \(String(describing: request))")
            return []
        }
        var actions: [NetlinkSession.Action] = []
        for datagram in NetlinkBytes.datagrams(capture) {
            let readdressed = NetlinkBytes.readdressed(datagram, sequence: sequence, portID: Self.portID)
            actions += try session.receive(NetlinkMessageParser.parse(readdressed))
        }
        return actions
    }

    private func events(_ capture: [String], in session: inout NetlinkSession) throws -> [NetlinkSession.Action] {
        var actions: [NetlinkSession.Action] = []
        for datagram in CapturedState.batches(capture) { actions += try session.receive(datagram) }
        return actions
    }

    private func reports(_ actions: [NetlinkSession.Action]) -> [LinkSnapshot] {
        actions.compactMap { if case .report(let snapshot) = $0 { snapshot } else { nil } }
    }

    private func dumpRequests(_ actions: [NetlinkSession.Action]) -> [NetlinkSession.Action] {
        actions.filter { if case .requestDump = $0 { true } else { false } }
    }

    /// A session that has completed its initial dumps; returns it and the initial snapshot.
    private func startedSession(logger: Logger = Logger(label: "test")) throws -> (NetlinkSession, LinkSnapshot) {
        var session = makeSession(logger: logger)
        let linkRequest = session.start().first
        let addressRequest = try reply(CapturedNetlink.linkDump, to: linkRequest, in: &session).last
        let routeRequest = try reply(CapturedNetlink.addressDump, to: addressRequest, in: &session).last
        let actions = try reply(CapturedNetlink.routeDump, to: routeRequest, in: &session)
        let snapshot = try #require(reports(actions).last)
        return (session, snapshot)
    }

    @Test func firstReportWaitsForLinksAddressesAndRoutes() throws {
        var session = makeSession()
        let start = session.start()
        #expect(start == [.requestDump(.links, sequence: 1)])
        let afterLinks = try reply(CapturedNetlink.linkDump, to: start.first, in: &session)
        #expect(afterLinks == [.requestDump(.addresses, sequence: 2)])
        let afterAddresses = try reply(CapturedNetlink.addressDump, to: afterLinks.first, in: &session)
        #expect(afterAddresses == [.requestDump(.routes, sequence: 3)])
        #expect(!session.hasReportedInitialSnapshot)
        let afterRoutes = try reply(CapturedNetlink.routeDump, to: afterAddresses.first, in: &session)
        #expect(afterRoutes.count == 1)
        let snapshot = try #require(reports(afterRoutes).first)
        #expect(snapshot.interfaces.count == 8)
        #expect(snapshot[name: "rd0"]?.routes.isEmpty == false)
        #expect(LinkAssessment(snapshot, filter: filter).isUsable)
    }

    @Test func eventsBeforeTheDumpsEndAreAppliedButNotReported() throws {
        var session = makeSession()
        let linkRequest = session.start().first
        #expect(reports(try events(CapturedNetlink.linkDown, in: &session)).isEmpty)
        let addressRequest = try reply(CapturedNetlink.linkDump, to: linkRequest, in: &session).last
        #expect(!session.hasReportedInitialSnapshot)
        _ = addressRequest
    }

    @Test func linkLossIsReportedBeforeTheRouteRedump() throws {
        var (session, initial) = try startedSession()
        #expect(LinkAssessment(initial, filter: filter).isUsable)
        let datagrams = CapturedState.batches(CapturedNetlink.linkDown)
        let first = try session.receive(datagrams[0])  // rd0's RTM_NEWLINK, down
        #expect(first.count == 2)
        guard case .report(let loss) = first.first, case .requestDump(.routes, let sequence) = first.last else {
            Issue.record("expected the loss report, then a route dump request: \(first)")
            return
        }
        #expect(!LinkAssessment(loss, filter: filter).isUsable)
        #expect(loss[name: "rd0"]?.routes.isEmpty == false)  // still the stale IPv4 routes
        var later: [NetlinkSession.Action] = []
        for datagram in datagrams.dropFirst() { later += try session.receive(datagram) }
        #expect(dumpRequests(later).isEmpty, "one route dump at a time")
        // The route dump (captured before the change) no longer lists rd0's routes once re-dumped:
        // reply with an empty dump (just NLMSG_DONE).
        let done = NetlinkBytes.message(type: 3, flags: 2, sequence: sequence, portID: Self.portID, body: [0, 0, 0, 0])
        let afterDump = try session.receive(NetlinkMessageParser.parse(done))
        let reconciled = try #require(reports(afterDump).first)
        #expect(reconciled[name: "rd0"]?.routes == [])
        // rd1's stale routes were in the earlier dump and are gone too; more route dumps were queued by
        // the later link events and are requested now.
        #expect(dumpRequests(afterDump) == [.requestDump(.routes, sequence: sequence + 1)])
    }

    @Test func aDatagramNotSentByTheKernelIsDroppedCountedAndLoggedOnce() throws {
        let logs = InMemoryLogHandler()
        var (session, _) = try startedSession(logger: Logger(label: "test") { _ in logs })
        let forged = CapturedState.batches(CapturedNetlink.linkDown)[0]  // rd0's RTM_NEWLINK, down
        for _ in 0..<3 {
            #expect(try session.receive(forged, from: 31337).isEmpty, "a process's word changes nothing")
        }
        #expect(session.foreignDatagramCount == 3)
        #expect(logs.entries.filter { $0.level == .warning }.map(\.metadata["sender"]) == ["31337"])
        let fromKernel = try session.receive(forged, from: 0)
        #expect(reports(fromKernel).count == 1, "the same message from the kernel is applied")
    }

    @Test func unchangedSnapshotsAreNotReportedAgain() throws {
        var (session, _) = try startedSession()
        let noop = NetlinkBytes.message(type: 1, body: [])
        #expect(try session.receive(NetlinkMessageParser.parse(noop)).isEmpty)
        let route = try events(CapturedNetlink.defaultRouteAdded, in: &session)  // already present
        #expect(reports(route).isEmpty)
    }

    @Test func overrunRedumpsEverythingAndCounts() throws {
        var (session, _) = try startedSession()
        #expect(session.overrun().isEmpty, "the re-dump waits until the receive queue is drained")
        #expect(session.overrunCount == 1)
        let actions = session.receiveQueueDrained()
        #expect(actions == [.requestDump(.links, sequence: 4)])
        #expect(session.receiveQueueDrained().isEmpty)
        _ = session.overrun()
        #expect(session.overrunCount == 2)
        // The second overrun came while links were being dumped: events about links already dumped may
        // be lost, and so may the dump's own end, so the whole pass starts over after the drain. A late
        // reply of the abandoned dump is applied as a notification and asks for nothing.
        let restart = session.receiveQueueDrained()
        #expect(restart == [.requestDump(.links, sequence: 5)])
        #expect(dumpRequests(try reply(CapturedNetlink.linkDump, to: actions.first, in: &session)).isEmpty)
        let afterSecondLinks = try reply(CapturedNetlink.linkDump, to: restart.first, in: &session)
        #expect(dumpRequests(afterSecondLinks) == [.requestDump(.addresses, sequence: 6)])
        let afterAddresses = try reply(CapturedNetlink.addressDump, to: afterSecondLinks.last, in: &session)
        #expect(dumpRequests(afterAddresses) == [.requestDump(.routes, sequence: 7)])
        let afterRoutes = try reply(CapturedNetlink.routeDump, to: afterAddresses.last, in: &session)
        #expect(dumpRequests(afterRoutes).isEmpty)
    }

    /// The kernel refuses a dump it cannot start on a full queue with an error message, which the
    /// full queue drops too: the session must not wait for that dump's end for ever.
    @Test func aDumpWhoseEndWasLostToAnOverrunIsRequestedAgain() throws {
        var (session, _) = try startedSession()
        _ = session.overrun()
        let links = try #require(session.receiveQueueDrained().first)
        #expect(links == .requestDump(.links, sequence: 4))
        // Its answer (an error, or NLMSG_DONE) never comes; the next thing the socket says is ENOBUFS.
        _ = session.overrun()
        #expect(session.receiveQueueDrained() == [.requestDump(.links, sequence: 5)])
    }

    @Test func anOverrunDuringTheStormReconcilesLostDeletions() throws {
        var (session, _) = try startedSession()
        // rdbr1 was deleted while events were being dropped: the DELLINK never arrives.
        _ = session.overrun()
        let request = session.receiveQueueDrained().first
        let withoutRdbr1 = NetlinkBytes.datagrams(CapturedNetlink.linkDump).map { datagram in
            NetlinkMessageParser.parse(datagram).messages.filter {
                if case .newLink(let link) = $0.body { link.name != "rdbr1" } else { true }
            }
        }
        guard case .requestDump(_, let sequence)? = request else { return }
        var actions: [NetlinkSession.Action] = []
        for messages in withoutRdbr1 {
            let batch = NetlinkBatch(
                messages: messages.map {
                    var message = $0
                    message.header.sequence = sequence
                    message.header.portID = Self.portID
                    return message
                }
            )
            actions += try session.receive(batch)
        }
        let snapshot = try #require(reports(actions).last)
        #expect(snapshot[name: "rdbr1"] == nil)
    }

    @Test func interruptedDumpsAreRepeated() throws {
        var session = makeSession()
        let request = session.start().first
        guard case .requestDump(_, let sequence)? = request else { return }
        var datagrams = NetlinkBytes.datagrams(CapturedNetlink.linkDump).map {
            NetlinkBytes.readdressed($0, sequence: sequence, portID: Self.portID)
        }
        // Set NLM_F_DUMP_INTR on the first message.
        datagrams[0][6] |= 0x10
        var actions: [NetlinkSession.Action] = []
        for datagram in datagrams { actions += try session.receive(NetlinkMessageParser.parse(datagram)) }
        #expect(dumpRequests(actions) == [.requestDump(.links, sequence: 2)])
    }

    @Test func failingDumpsAreRetriedThenGivenUp() throws {
        var session = makeSession()
        var request = session.start().first
        for attempt in 1...NetlinkSession.maximumConsecutiveDumpFailures {
            guard case .requestDump(.links, let sequence)? = request else {
                Issue.record("attempt \(attempt): expected a links dump request, got \(String(describing: request))")
                return
            }
            // EBUSY as NLMSG_ERROR on the request.
            let error = NetlinkBytes.message(
                type: 2,
                sequence: sequence,
                portID: Self.portID,
                body: NetlinkBytes.integer(Int32(-16)) + [UInt8](repeating: 0, count: 16)
            )
            if attempt < NetlinkSession.maximumConsecutiveDumpFailures {
                request = try session.receive(NetlinkMessageParser.parse(error)).first
            } else {
                #expect(throws: NetlinkDumpFailure(kind: .links, errorCode: -16)) {
                    _ = try session.receive(NetlinkMessageParser.parse(error))
                }
            }
        }
    }

    @Test func malformedDataIsCounted() throws {
        var (session, _) = try startedSession()
        _ = try session.receive(NetlinkMessageParser.parse([1, 2, 3]))
        #expect(session.malformedCount == 1)
    }

    @Test func overrunsAreLoggedOncePerBurst() throws {
        let logs = InMemoryLogHandler()
        var (session, _) = try startedSession(logger: Logger(label: "test") { _ in logs })
        /// Answers every dump request with the matching capture until none is left.
        func completeResync(from request: NetlinkSession.Action?) throws {
            var next = request
            while case .requestDump(let kind, _)? = next {
                let capture =
                    switch kind {
                    case .links: CapturedNetlink.linkDump
                    case .addresses: CapturedNetlink.addressDump
                    case .routes: CapturedNetlink.routeDump
                    }
                next =
                    dumpRequests(try reply(capture, to: next, in: &session)).last
                    ?? session.receiveQueueDrained().last
            }
        }
        _ = session.overrun()
        let request = session.receiveQueueDrained().first
        for _ in 0..<50 { _ = session.overrun() }
        try completeResync(from: request)
        #expect(logs.entries.filter { $0.level == .warning }.count == 1)
        #expect(logs.entries.filter { $0.level == .notice }.map(\.metadata["overruns"]) == ["51"])
        _ = session.overrun()
        try completeResync(from: session.receiveQueueDrained().first)
        #expect(logs.entries.filter { $0.level == .warning }.count == 2)
        #expect(session.overrunCount == 52)
    }
}
