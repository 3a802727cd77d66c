import ReachSupport
import ReachTesting
import Testing

@testable import ReachCore

/// The quality judge's rule (``QualityJudge``), on its edges: 3 evaluations in a row past the
/// budget to impair, 5 in a row under 0.7 × the budget to clear, nothing before the window holds
/// enough samples or without a budget.
struct QualityJudgeTests {
    /// Feeds samples one second apart, each its own evaluation.
    struct Feeder {
        var judge: QualityJudge
        var now = WallTime(sinceEpoch: .seconds(1_000))

        /// A window that holds only the last sample, judged from the first: each evaluation's
        /// measure is that sample's, so the rule is seen without a median in the way.
        init(_ budget: QualityBudget) {
            var budget = budget
            budget.window = .seconds(1)
            judge = QualityJudge(budget: budget, interval: .seconds(1), minimumSamples: 1)
        }

        init(judge: QualityJudge) { self.judge = judge }

        @discardableResult
        mutating func latency(_ ms: Int, times: Int = 1) -> TargetQuality? {
            for _ in 0..<times {
                now = now.advanced(by: .seconds(1))
                judge.evaluate(QualitySample(at: now, latency: .milliseconds(ms)))
            }
            return judge.quality
        }

        @discardableResult
        mutating func lost(times: Int = 1) -> TargetQuality? {
            for _ in 0..<times {
                now = now.advanced(by: .seconds(1))
                judge.evaluate(QualitySample(at: now, latency: nil))
            }
            return judge.quality
        }

        var state: QualityState? { judge.quality?.state }
    }

    static let latencyBudget = QualityBudget(latency: .milliseconds(300))

    @Test func withinTheBudgetAtTheFirstEvaluationIsGood() {
        var feeder = Feeder(Self.latencyBudget)
        #expect(feeder.state == nil)
        feeder.latency(300)
        #expect(feeder.state == .good, "at the budget is within it")
    }

    @Test func pastTheBudgetFromTheStartIsNoneUntilTheThirdEvaluation() {
        var feeder = Feeder(Self.latencyBudget)
        feeder.latency(301, times: 2)
        #expect(feeder.judge.quality == nil, "deciding: neither good nor impaired yet")
        feeder.latency(301)
        #expect(feeder.state == .impaired)
        #expect(feeder.judge.quality?.exceeded == [QualityFinding(measure: .latency, value: 0.301, budget: 0.3)])
    }

    @Test func goodTurnsImpairedAtTheThirdEvaluationInARowPastTheBudgetNotTheSecond() {
        var feeder = Feeder(Self.latencyBudget)
        feeder.latency(10)
        feeder.latency(400, times: 2)
        #expect(feeder.state == .good)
        feeder.latency(10)
        feeder.latency(400, times: 2)
        #expect(feeder.state == .good, "a measure within the budget breaks the run")
        let since = feeder.now.advanced(by: .seconds(1))
        feeder.latency(400)
        #expect(feeder.state == .impaired)
        #expect(feeder.judge.quality?.since == since)
    }

    @Test func impairedClearsAtTheFifthEvaluationInARowUnderSevenTenthsOfTheBudget() {
        var feeder = Feeder(Self.latencyBudget)
        feeder.latency(10)
        feeder.latency(400, times: 3)
        #expect(feeder.state == .impaired)
        feeder.latency(209, times: 4)
        #expect(feeder.state == .impaired)
        feeder.latency(210)
        #expect(feeder.state == .impaired, "0.7 × 300 ms is not under it: the run starts again")
        feeder.latency(209, times: 4)
        #expect(feeder.state == .impaired)
        feeder.latency(209)
        #expect(feeder.state == .good)
        #expect(feeder.judge.quality?.exceeded == [])
    }

    @Test func betweenSevenTenthsAndTheBudgetNothingChanges() {
        var feeder = Feeder(Self.latencyBudget)
        feeder.latency(10)
        feeder.latency(250, times: 50)
        #expect(feeder.state == .good)
        feeder.latency(400, times: 3)
        feeder.latency(250, times: 50)
        #expect(feeder.state == .impaired, "not under 0.7 × the budget: still impaired")
    }

    @Test func anImpairedMeasureKeepsItsLastValueWhileItHasNone() {
        var feeder = Feeder(QualityBudget(latency: .milliseconds(300), loss: 0.5))
        feeder.latency(10)
        feeder.latency(400, times: 3)
        feeder.lost(times: 3)
        #expect(
            feeder.judge.quality?.exceeded == [
                QualityFinding(measure: .latency, value: 0.4, budget: 0.3),
                QualityFinding(measure: .loss, value: 1, budget: 0.5),
            ]
        )
    }

    @Test func lossIsJudgedOverTheWindowAndEachMeasureHasItsOwnHysteresis() {
        // 10 probes in the window (10 s at 1 s), judged from 5: loss 10 %, one in ten.
        var feeder = Feeder(
            judge: QualityJudge(budget: QualityBudget(loss: 0.1, window: .seconds(10)), interval: .seconds(1))
        )
        #expect(feeder.judge.minimumSamples == 5)
        feeder.latency(10, times: 4)
        #expect(feeder.judge.quality == nil, "4 samples are not enough")
        feeder.lost()
        #expect(feeder.state == nil, "20 % past 10 %: deciding")
        feeder.latency(10)
        #expect(feeder.state == nil, "1 in 6: the second in a row")
        feeder.latency(10)
        #expect(feeder.state == .impaired, "1 in 7: the third in a row")
        #expect(feeder.judge.measures.loss == 1.0 / 7)
        feeder.latency(10, times: 3)
        #expect(feeder.judge.measures.loss == 0.1)
        feeder.latency(10, times: 4)
        #expect(feeder.state == .impaired, "10 % is not under 7 %: the loss is still in the window")
        feeder.latency(10)
        #expect(feeder.judge.measures.loss == 0, "it has left the window")
        feeder.latency(10, times: 3)
        #expect(feeder.state == .impaired, "4 in a row under 7 %")
        feeder.latency(10)
        #expect(feeder.state == .good, "5 in a row under 7 %")
    }

    @Test func theMedianOfTheWindowDecidesNotOneSlowProbe() {
        var feeder = Feeder(
            judge: QualityJudge(budget: QualityBudget(latency: .milliseconds(300)), interval: .seconds(1))
        )
        #expect(feeder.judge.minimumSamples == 15)
        feeder.latency(10, times: 14)
        #expect(feeder.judge.quality == nil)
        feeder.latency(10)
        #expect(feeder.state == .good)
        // Every third probe slow for a minute: the median stays fast.
        for _ in 0..<20 {
            feeder.latency(2_000)
            feeder.latency(10, times: 2)
        }
        #expect(feeder.state == .good)
        #expect(feeder.judge.measures.latency == .milliseconds(10))
    }

    /// The fault matrix's case, in the pure core: 400 ms added to a 300 ms budget is impaired within
    /// the window plus 3 evaluations (a 30 s window at 1 s: the median turns at 15 slow probes).
    @Test func aSlowLineIsImpairedWithinTheWindowAndThreeEvaluations() {
        var feeder = Feeder(
            judge: QualityJudge(budget: QualityBudget(latency: .milliseconds(300)), interval: .seconds(1))
        )
        feeder.latency(5, times: 30)
        var evaluations = 0
        while feeder.state != .impaired {
            feeder.latency(405)
            evaluations += 1
        }
        #expect(evaluations == 16 + 2, "the 16th slow probe of 30 turns the median; then 2 more")
        #expect(evaluations <= 30 + 3)
    }

    @Test func jitterIsJudgedOnlyWhereTheProbesMeasureIt() {
        var feeder = Feeder(QualityBudget(latency: .milliseconds(300), jitter: .milliseconds(50)))
        feeder.latency(10, times: 10)
        #expect(feeder.state == .good)
        #expect(feeder.judge.measures.jitter == nil)
        for _ in 0..<3 {
            feeder.now = feeder.now.advanced(by: .seconds(1))
            feeder.judge.evaluate(
                QualitySample(
                    at: feeder.now,
                    latency: .milliseconds(20),
                    sent: 5,
                    received: 5,
                    jitter: .milliseconds(80)
                )
            )
        }
        #expect(feeder.judge.quality?.exceeded.map(\.measure) == [.jitter])
    }

    @Test func withoutABudgetThereIsNoQuality() {
        var feeder = Feeder(QualityBudget())
        feeder.latency(5_000, times: 20)
        feeder.lost(times: 20)
        #expect(feeder.judge.quality == nil)
        #expect(QualityJudge(for: .http("server")) == nil)
        #expect(feeder.judge.measures.loss == 1, "the measures are still taken")
    }

    @Test func echoBurstsCountEachEchoInTheLoss() {
        var window = QualityWindow(length: .seconds(30))
        let start = WallTime(sinceEpoch: .seconds(1_000))
        window.add(QualitySample(at: start, latency: .milliseconds(10), sent: 5, received: 3))
        window.add(QualitySample(at: start.advanced(by: .seconds(1)), latency: nil, sent: 5, received: 0))
        #expect(window.measures.loss == 0.7)
        #expect(window.measures.latency == .milliseconds(10))
        window.add(
            QualitySample(at: start.advanced(by: .seconds(30)), latency: .milliseconds(30), sent: 5, received: 5)
        )
        #expect(window.count == 2, "the first left the window at 30 s")
        #expect(window.measures.loss == 0.5)
        #expect(window.measures.latency == .milliseconds(30))
    }

    @Test func anICMPProbeIsSampledPerEchoAndAnyOtherPerProbe() {
        let now = WallTime(sinceEpoch: .seconds(1_000))
        var burst = ProbeResult.success("ping", latency: .milliseconds(20))
        burst.echoes = EchoStatistics(sent: 5, roundTrips: [10, 30, 20].map(Duration.milliseconds))
        #expect(
            QualitySample(burst, at: now)
                == QualitySample(at: now, latency: .milliseconds(20), sent: 5, received: 3, jitter: .milliseconds(15)),
            "the median round trip, 2 of 5 echoes lost, |30-10| and |20-30| over 2 steps"
        )
        var silent = ProbeResult.failure("ping", .timeout, latency: .seconds(2))
        silent.echoes = EchoStatistics(sent: 5, roundTrips: [])
        #expect(QualitySample(silent, at: now) == QualitySample(at: now, latency: nil, sent: 5, received: 0))
        #expect(
            QualitySample(.ok("api", ms: 40), at: now) == QualitySample(at: now, latency: .milliseconds(40)),
            "one request, answered"
        )
        #expect(
            QualitySample(.refused("api"), at: now) == QualitySample(at: now, latency: nil, sent: 1, received: 0),
            "one request, lost whatever the reason"
        )
    }
}
