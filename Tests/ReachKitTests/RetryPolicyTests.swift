import AsyncHTTPClient
import Foundation
import GRPCCore
import NIOCore
import NIOHTTP1
import ReachKit
import ReachKitTesting
import ReachTestRigs
import ReachTesting
import Synchronization
import Testing

/// Live calls: retried by the policy's rule, for as long as it allows, classified by what HTTP and
/// gRPC say, and stopped by a breaker or a loss when the program asks.
@Suite("Retrying a live call")
struct RetryPolicyTests {
    @Test func anHTTPCallAnswered503WithRetryAfterWaitsAsAskedThenGets200() async throws {
        // The server a real client talks to: 503 with `Retry-After: 7` once, then 200.
        let server = try StandInServer(name: "retry-after-server", mode: "once retry-after 7")
        try await server.waitUntilReady()
        let port = server.port
        let clock = TestClock()
        let attempts = Collected<Duration>()
        let policy = RetryPolicy(
            maxAttempts: 3,
            backoff: ReconnectBackoff(first: .milliseconds(10), longest: .milliseconds(10)),
            deadline: nil
        )
        let call = Task {
            try await policy.run(
                clock: clock.monitorClock,
                classify: { (result: Result<HTTPClientResponse, any Error>) in
                    guard case .success(let response) = result else { return .default(result) }
                    return .http(
                        status: Int(response.status.code),
                        retryAfter: response.headers.first(name: "retry-after")
                    )
                }
            ) { _ -> HTTPClientResponse in
                attempts.append(clock.now.offset)
                return try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/"),
                    timeout: .seconds(10)
                )
            }
        }
        try await clock.waitForSleepers()
        #expect(attempts.count == 1)
        clock.advance(by: .seconds(6))
        #expect(clock.sleeperCount == 1, "still waiting: the server asked for 7 s, more than the 10 ms backoff")
        clock.advance(by: .seconds(1))
        let response = try await call.value
        #expect(response.status.code == 200)
        #expect(attempts.all == [.zero, .seconds(7)])
        await server.stop()
    }

    @Test func retryableAnswersAreRetriedUntilTheAttemptsAreSpentAndPermanentOnesAreNot() async throws {
        let policy = RetryPolicy(
            maxAttempts: 4,
            backoff: ReconnectBackoff(first: .milliseconds(1), longest: .milliseconds(1)),
            deadline: nil
        )
        let calls = Collected<Int>()
        let last = try await policy.run(classify: { .http(status: (try? $0.get()) ?? 0) }) { attempt in
            calls.append(attempt)
            return 502
        }
        #expect(last == 502 && calls.all == [1, 2, 3, 4], "the last answer stands once the attempts are spent")
        let refused = try await policy.run(classify: { .http(status: (try? $0.get()) ?? 0) }) { _ in 404 }
        #expect(refused == 404)
        await #expect(throws: CancellationError.self, "a cancelled call is not retried") {
            let _: Int = try await policy.run { _ in
                calls.append(0)
                throw CancellationError()
            }
        }
        #expect(calls.all.filter { $0 == 0 }.count == 1)
    }

    @Test func theDeadlineCutsAHungAttempt() async throws {
        let policy = RetryPolicy(maxAttempts: 5, deadline: .milliseconds(100))
        let attempts = Collected<Int>()
        var interrupted: CallInterrupted?
        do {
            try await policy.run { attempt in
                attempts.append(attempt)
                try await Task.sleep(for: .seconds(3_600))
            }
        } catch let error as CallInterrupted {
            interrupted = error
        }
        guard case .deadlineExceeded(let left) = interrupted else {
            Issue.record("expected the deadline, got \(String(describing: interrupted))")
            return
        }
        #expect(
            left <= .milliseconds(100) && attempts.all == [1],
            "the first attempt had all the deadline, and there was no time for another"
        )
    }

    @Test func aLossCancelsTheCallWhenAsked() async throws {
        let service = TestConnectivityService(.connected)
        let following = Task { try await service.run() }
        defer { following.cancel() }
        let started = Collected<Int>()
        let call = Task {
            try await RetryPolicy().run(cancellingOnLossOf: service) { attempt in
                started.append(attempt)
                try await Task.sleep(for: .seconds(3_600))
            }
        }
        try await waitUntil("the call under way") { started.count == 1 }
        await service.disconnect()
        await #expect(throws: CallInterrupted.connectivityLost) { try await call.value }
        await #expect(throws: CallInterrupted.connectivityLost, "begun while disconnected: at once") {
            try await RetryPolicy().run(cancellingOnLossOf: service) { _ in 1 }
        }
    }

    @Test func anOpenBreakerRefusesCallsUntilItsCooldownLetsOneTrialThrough() async throws {
        let clock = TestClock()
        let breaker = CircuitBreaker(threshold: 2, cooldown: .seconds(60), clock: clock.monitorClock)
        let once = RetryPolicy(maxAttempts: 1, deadline: nil)
        for _ in 0..<2 {
            _ = try await once.run(breaker: breaker, classify: { .http(status: (try? $0.get()) ?? 0) }) { _ in 503 }
        }
        #expect(breaker.state == .open)
        await #expect(throws: CallInterrupted.breakerOpen) { try await once.run(breaker: breaker) { _ in 200 } }
        clock.advance(by: .seconds(60))
        #expect(breaker.state == .halfOpen)
        #expect(breaker.admit(), "one trial")
        #expect(!breaker.admit(), "and only one")
        breaker.record(.success)
        #expect(breaker.state == .closed)
    }

    @Test func theGRPCCodesClassifyAsTheIssueSays() throws {
        let retryable: Set<Status.Code> = [.unavailable, .deadlineExceeded, .resourceExhausted]
        let codes = (0...16).compactMap(Status.Code.init(rawValue:))
        #expect(codes.count == 17, "every gRPC status code")
        for code in codes {
            let expected: CallOutcome =
                code == .ok ? .success : retryable.contains(code) ? .retryable(after: nil) : .permanent
            #expect(CallOutcome.grpc(code: code.rawValue) == expected, "\(code)")
            if let error = RPCError.Code(code) {
                #expect(CallOutcome.grpc(code: error.rawValue) == expected, "RPCError \(code)")
            }
        }
    }

    @Test func httpStatusesAndRetryAfterClassifyAsTheIssueSays() {
        let now = WallTime(sinceEpoch: .seconds(784_111_777))  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(CallOutcome.http(status: 200) == .success && CallOutcome.http(status: 304) == .success)
        #expect(
            CallOutcome.http(status: 500) == .retryable(after: nil)
                && CallOutcome.http(status: 504) == .retryable(after: nil)
        )
        #expect(CallOutcome.http(status: 503, retryAfter: "120") == .retryable(after: .seconds(120)))
        #expect(
            CallOutcome.http(status: 429, retryAfter: "Sun, 06 Nov 1994 08:50:07 GMT", now: now)
                == .retryable(after: .seconds(30))
        )
        #expect(
            CallOutcome.http(status: 503, retryAfter: "Sun, 06 Nov 1994 08:49:00 GMT", now: now)
                == .retryable(after: .zero),
            "a date past"
        )
        #expect(
            CallOutcome.http(status: 503, retryAfter: "soon") == .retryable(after: nil),
            "unreadable: the backoff decides"
        )
        #expect(
            CallOutcome.http(status: 400) == .permanent && CallOutcome.http(status: 404) == .permanent
                && CallOutcome.http(status: 408) == .permanent
        )
    }
}
