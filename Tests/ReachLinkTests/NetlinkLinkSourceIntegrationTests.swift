import Foundation
import Logging
import ReachCore
import ReachLink
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

/// The real adapter against the real kernel, each test in its own network namespace with a veth
/// pair: rd0 (watched, 198.51.100.2/24, default route via 198.51.100.1) and its peer rd1.
@Suite(.enabled(if: TestNamespace.isAvailable, Comment(rawValue: TestNamespace.unavailableReason)))
struct NetlinkLinkSourceIntegrationTests {
    fileprivate let filter = InterfaceFilter(include: ["rd0", "rd2"], exclude: [])

    private func assessment(_ snapshot: LinkSnapshot?) -> LinkAssessment? {
        snapshot.map { LinkAssessment($0, filter: filter) }
    }

    /// Namespace, rig and running adapter; deleted and stopped whatever the test does.
    fileprivate func withRig(
        _ label: String,
        receiveBufferSize: Int = 4 << 20,
        _ body: @Sendable (TestNamespace, RunningSource) async throws -> Void
    ) async throws {
        let namespace = try await TestNamespace.make(label)
        let source: RunningSource
        do {
            try await namespace.addVethWithDefaultRoute()
            source = RunningSource(in: namespace, receiveBufferSize: receiveBufferSize)
        } catch {
            await namespace.delete()
            throw error
        }
        do {
            let initial = try await source.waitFor { _ in true }
            #expect(initial != nil, "no initial snapshot")
            try await body(namespace, source)
        } catch {
            // A source that stopped on its own (a dump the kernel kept refusing) explains the failure.
            do { _ = try await source.stop() } catch let stopped { Issue.record("the source had stopped: \(stopped)") }
            await namespace.delete()
            throw error
        }
        let shutdown = try await source.stop()
        await namespace.delete()
        #expect(shutdown < .seconds(1), "run took \(shutdown) to return after cancellation")
    }

    @Test func initialSnapshotIsCompleteAndUsable() async throws {
        try await withRig("initial") { namespace, source in
            let first = try #require(source.recent.first)
            let rd0 = try #require(first[name: "rd0"])
            #expect(rd0.kind == .virtual && rd0.linkKind == "veth")
            #expect(rd0.addresses.contains { $0.prefix.description == "198.51.100.2/24" && $0.scope == .global })
            #expect(rd0.defaultRouteFamilies.contains(.ipv4))
            #expect(first[name: "lo"]?.kind == .loopback)
            #expect(assessment(first)?.isUsable == true)
            try await source.expectMatchesIP()
        }
    }

    @Test func linkDownIsReportedAtOnceThenRoutesAreReconciled() async throws {
        try await withRig("linkdown") { namespace, source in
            try await source.expectMatchesIP()
            try await namespace.ip("link", "set", "rd0", "down")
            let down = try await source.waitFor { $0[name: "rd0"]?.isAdminUp == false }
            #expect(assessment(down)?.blocker == .noLink)
            // The loss went out before the route re-dump: the first down report still lists the
            // IPv4 routes the kernel flushed silently; a later one does not.
            let firstDown = Self.firstReport(in: source.recent) { $0[name: "rd0"]?.isAdminUp == false }
            #expect(firstDown?[name: "rd0"]?.defaultRouteFamilies.contains(.ipv4) == true)
            let reconciled = try await source.waitFor { $0[name: "rd0"]?.routes.isEmpty == true }
            #expect(reconciled != nil, "routes of the downed link were never dropped")
            try await source.expectMatchesIP()

            try await namespace.ip("link", "set", "rd0", "up")
            try await namespace.ip("route", "add", "default", "via", "198.51.100.1", "dev", "rd0")
            let up = try await source.waitFor { LinkAssessment($0, filter: filter).isUsable }
            #expect(up?[name: "rd0"]?.operState == .up)
            try await source.expectMatchesIP()
        }
    }

    @Test func peerDownIsCarrierLossOnOurSide() async throws {
        try await withRig("carrier") { namespace, source in
            try await namespace.ip("link", "set", "rd1", "down")
            let lost = try await source.waitFor { $0[name: "rd0"]?.operState == .lowerLayerDown }
            let rd0 = try #require(lost?[name: "rd0"])
            #expect(rd0.isAdminUp && !rd0.isLowerUp && !rd0.hasCarrier)
            #expect(assessment(lost)?.blocker == .noLink)
            try await source.expectMatchesIP()

            try await namespace.ip("link", "set", "rd1", "up")
            // IPv4 keeps routes on carrier loss (flagged linkdown), so the link comes back usable by itself.
            let back = try await source.waitFor { LinkAssessment($0, filter: filter).isUsable }
            #expect(back?[name: "rd0"]?.hasCarrier == true)
            try await source.expectMatchesIP()
        }
    }

    @Test func addressRemovedAndAdded() async throws {
        try await withRig("address") { namespace, source in
            try await namespace.ip("addr", "del", "198.51.100.2/24", "dev", "rd0")
            let removed = try await source.waitFor { $0[name: "rd0"]?.usableAddressFamilies.isEmpty == true }
            #expect(assessment(removed)?.blocker == .noAddress)
            try await source.expectMatchesIP()

            try await namespace.ip("addr", "add", "198.51.100.2/24", "dev", "rd0")
            try await namespace.ip("route", "replace", "default", "via", "198.51.100.1", "dev", "rd0")
            let restored = try await source.waitFor { LinkAssessment($0, filter: filter).isUsable }
            #expect(restored != nil)
            try await source.expectMatchesIP()
        }
    }

    @Test func defaultRouteRemovedAndAdded() async throws {
        try await withRig("route") { namespace, source in
            try await namespace.ip("route", "del", "default", "via", "198.51.100.1", "dev", "rd0")
            let removed = try await source.waitFor { !($0[name: "rd0"]?.defaultRouteFamilies.contains(.ipv4) ?? true) }
            #expect(assessment(removed)?.blocker == .noRoute)
            try await source.expectMatchesIP()

            try await namespace.ip("route", "add", "default", "via", "198.51.100.1", "dev", "rd0")
            let added = try await source.waitFor { LinkAssessment($0, filter: filter).isUsable }
            #expect(added != nil)
            try await source.expectMatchesIP()
        }
    }

    @Test func interfaceRenamedThenDeleted() async throws {
        try await withRig("rename") { namespace, source in
            let index = try #require(source.latest?[name: "rd0"]?.index)
            try await namespace.ip("link", "set", "rd0", "down")
            try await namespace.ip("link", "set", "rd0", "name", "rd2")
            try await namespace.ip("link", "set", "rd2", "up")
            try await namespace.ip("route", "add", "default", "via", "198.51.100.1", "dev", "rd2")
            let renamed = try await source.waitFor { $0[name: "rd2"] != nil && $0[name: "rd0"] == nil }
            #expect(renamed?[name: "rd2"]?.index == index)
            let usable = try await source.waitFor { LinkAssessment($0, filter: filter).usableInterfaces == ["rd2"] }
            #expect(usable != nil)
            try await source.expectMatchesIP()

            try await namespace.ip("link", "del", "rd2")
            let deleted = try await source.waitFor { $0[name: "rd2"] == nil && $0[name: "rd1"] == nil }
            #expect(deleted?.interfaces.map(\.name) == ["lo"])
            #expect(assessment(deleted)?.blocker == .noLink)
            try await source.expectMatchesIP()
        }
    }

    @Test func overrunWithATinyReceiveBufferIsRecovered() async throws {
        // 1 byte asks for the kernel's minimum (a few KiB): a storm overflows it at once.
        try await withRig("enobufs", receiveBufferSize: 1) { namespace, source in
            let flaps = (0..<1_000).flatMap { _ in ["link set rd0 down", "link set rd0 up"] }
            try await namespace.ipBatch(flaps + ["route replace default via 198.51.100.1 dev rd0"])
            try await source.expectMatchesIP(timeout: .seconds(10))
            #expect(source.source.overrunCount > 0, "the storm should have overflowed a minimal receive buffer")
            let usable = try await source.waitFor { LinkAssessment($0, filter: filter).isUsable }
            #expect(usable != nil)
        }
    }

    @Test func aMissingNamespaceIsAnError() async throws {
        let source = NetlinkLinkSource(
            logger: .init(label: "test"),
            networkNamespacePath: "/run/netns/rdt-does-not-exist"
        )
        await #expect(throws: (any Error).self) {
            try await source.run { _ in }
        }
    }

    private static func firstReport(
        in reports: [LinkSnapshot],
        where condition: (LinkSnapshot) -> Bool
    ) -> LinkSnapshot? {
        reports.first(where: condition)
    }

    /// VmRSS of this test process, in MiB.
    fileprivate static func residentMegabytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }
}

extension NetlinkLinkSourceIntegrationTests {
    /// Measures this process's resident memory and how promptly it resumes a task, so it runs
    /// alone: `scripts/test` runs every suite named `Alone` after the parallel suite, where no other
    /// test's allocations or CPU count (in the parallel suite, five other tests grew it by up to 100 MiB).
    @Suite(.serialized, .enabled(if: TestNamespace.isAvailable, Comment(rawValue: TestNamespace.unavailableReason)))
    struct Alone {
        /// Times the whole stop: the doorbell, the reader's wake, and the cancelled task resumed by
        /// this process's cooperative pool, so it runs alone too: in the parallel suite, CPU-bound
        /// tests beside it held both threads of a 2-core pool and the stop took 1.2 s and 1.8 s.
        @Test func cancellationStopsPromptlyEvenWhenIdle() async throws {
            let namespace = try await TestNamespace.make("cancel")
            let source = RunningSource(in: namespace)
            let initial = try? await source.waitFor { _ in true }
            // Nothing happens: wait until the reader sits in poll() with nothing to do.
            try await waitUntil("the reader idle in poll()") { source.readerIsIdleInPoll }
            let shutdown = try await source.stop()
            await namespace.delete()
            #expect(initial != nil)
            print("an idle netlink reader stopped \(shutdown) after cancellation")
            #expect(
                shutdown < .seconds(1),
                "an idle reader blocked in poll() must wake on cancellation, took \(shutdown)"
            )
        }

        @Test func thousandFlapStormEndsInTheKernelsState() async throws {
            try await NetlinkLinkSourceIntegrationTests().withRig("storm") { namespace, source in
                let residentBefore = NetlinkLinkSourceIntegrationTests.residentMegabytes()
                let flaps = (0..<1_000).flatMap { _ in ["link set rd0 down", "link set rd0 up"] }
                try await namespace.ipBatch(flaps + ["route replace default via 198.51.100.1 dev rd0"])
                let settled = try await source.waitFor(timeout: .seconds(10)) {
                    LinkAssessment($0, filter: NetlinkLinkSourceIntegrationTests().filter).isUsable
                }
                #expect(settled != nil)
                // Measured once the storm is reported, before the comparison with ip -j, whose many
                // child processes (it polls until the kernel's state matches) are the test's own cost.
                let growth = NetlinkLinkSourceIntegrationTests.residentMegabytes() - residentBefore
                try await source.expectMatchesIP(timeout: .seconds(10))
                #expect(source.reportCount > 10, "a storm should be reported as it happens, not coalesced")
                #expect(growth < 64, "resident memory grew by \(growth) MiB during the storm")
            }
        }
    }
}
