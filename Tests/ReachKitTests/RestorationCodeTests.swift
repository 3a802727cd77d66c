import ReachKit
import ReachKitTesting
import Synchronization
import Testing

/// How a program tests its own restoration code with ReachKitTesting: no reachd, no network, and
/// the callbacks run by the same reaction rule as in the real services.
@Suite("A program's restoration code, tested without reachd")
struct RestorationCodeTests {
    /// A program's code: a cache that is warmed when connectivity is restored and marked stale,
    /// with the reason, when it is lost.
    final class Cache: Sendable {
        private let state = Mutex<(warmings: Int, staleBecause: String?)>((0, nil))

        init(following service: some ConnectivityService) {
            service.onConnectivityRestored(named: "warm-cache") { [self] _ in
                state.withLock { $0 = ($0.warmings + 1, nil) }
            }
            service.onConnectivityLost(named: "mark-stale") { [self] transition in
                state.withLock { $0.staleBecause = transition.verdict.reason.code }
            }
        }

        var warmings: Int { state.withLock { $0.warmings } }
        var staleBecause: String? { state.withLock { $0.staleBecause } }
    }

    @Test func theCacheIsWarmedOnEachRestorationAndMarkedStaleOnEachLoss() async throws {
        let service = TestConnectivityService(.disconnected)
        let cache = Cache(following: service)
        let running = Task { try await service.run() }
        defer { running.cancel() }

        let restored = await service.connect()
        #expect(restored.map(\.name) == ["warm-cache"] && restored.map(\.outcome) == [.succeeded])
        #expect(cache.warmings == 1)

        let lost = await service.disconnect(.targetFailed(target: "api", reason: .connectionRefused))
        #expect(lost.map(\.name) == ["mark-stale"] && lost.map(\.outcome) == [.succeeded])
        #expect(cache.staleBecause == "connection_refused")

        await service.connect()
        // reachd going away and coming back at the same state is no transition: nothing runs.
        let unreachable = ServiceVerdict(
            state: .unknown,
            reason: .reachdUnreachable("connection refused"),
            since: service.current.since
        )
        #expect(await service.publish(unreachable).isEmpty)
        #expect(!service.isConnected && !service.isLikelyConnected)
        #expect(await service.connect().isEmpty)
        #expect(cache.warmings == 2 && cache.staleBecause == nil)
    }

    @Test func aRetryButtonAsksTheServiceToCheckNow() async {
        let service = TestConnectivityService(.disconnected)
        #expect(service.checkRequests == 0)
        // What the check finds is the test's to say; the program shows what it answers.
        let answer = await service.checkNow()
        #expect(service.checkRequests == 1)
        #expect(answer == service.current)
    }

    @Test func aFailingOrHangingCallbackIsReportedAndHoldsNoOtherBack() async throws {
        let service = TestConnectivityService(.disconnected, callbackTimeout: .milliseconds(200))
        struct Offline: Error {}
        service.onConnectivityRestored(named: "fails") { _ in throw Offline() }
        // Hangs on purpose, until cancelled.
        service.onConnectivityRestored(named: "hangs") { _ in try await Task.sleep(for: .seconds(3_600)) }
        let removed = service.onConnectivityRestored(named: "removed") { _ in }
        service.onConnectivityRestored(named: "works") { _ in }
        #expect(removed.remove())
        let running = Task { try await service.run() }
        defer { running.cancel() }

        let reports = await service.connect()
        let outcomes = Dictionary(uniqueKeysWithValues: reports.map { ($0.name, $0.outcome.code) })
        #expect(outcomes == ["fails": "failed", "hangs": "timed_out", "works": "ok"])
    }
}
