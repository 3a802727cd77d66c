import ReachCore
import ReachKit
import ReachKitTesting
import ReachSupport
import Testing

/// What a program sees of the quality: ``ServiceVerdict/quality`` as the status document carries
/// it, and ``ConnectivityService/qualityChanges()``, which says each change of meaning once.
@Suite("A program and the quality")
struct QualityServiceTests {
    static let at = WallTime(sinceEpoch: .seconds(1_800_000_000))

    static func connected(_ quality: VerdictQuality?) -> ServiceVerdict {
        ServiceVerdict(state: .connected, reason: .monitor(.healthy), since: at, quality: quality)
    }

    static func impaired(_ value: Double, target: String = "api", fault: Fault = .server) -> VerdictQuality {
        VerdictQuality(
            state: .impaired,
            fault: fault,
            target: target,
            exceeded: [QualityFinding(measure: .latency, value: value, budget: 0.3)],
            since: at
        )
    }

    @Test func theQualityReadsTheSameFromTheDocumentAsFromTheMonitor() {
        var verdict = Verdict(state: .connected, reason: .healthy, since: Self.at)
        verdict.quality = Self.impaired(0.412, fault: .gateway)
        let seen = ServiceVerdict(verdict)
        #expect(seen.quality == verdict.quality)
        #expect(seen.quality?.fault == .gateway)
        verdict.quality = nil
        #expect(ServiceVerdict(verdict).quality == nil)
    }

    @Test func qualityChangesSaysEachChangeOfMeaningOnceAndNotEachNewValue() async throws {
        let service = TestConnectivityService(.connected)
        let runner = Task { try await service.run() }
        var changes = service.qualityChanges().makeAsyncIterator()
        #expect(await changes.next() == .some(nil), "the current quality first: none yet")
        await service.publish(Self.connected(VerdictQuality(state: .good, since: Self.at)))
        #expect(await changes.next()??.state == .good)
        await service.publish(Self.connected(Self.impaired(0.4)))
        await service.publish(Self.connected(Self.impaired(0.5)))
        await service.publish(Self.connected(Self.impaired(0.6, target: "db")))
        let impaired = await changes.next()
        #expect(impaired??.exceeded.first?.value == 0.4)
        let moved = await changes.next()
        #expect(moved??.target == "db", "a new value alone (0.5) was not a change")
        await service.publish(ServiceVerdict(state: .disconnected, reason: .monitor(.noLink), since: Self.at))
        #expect(await changes.next() == .some(nil), "disconnected: no quality")
        runner.cancel()
    }
}
