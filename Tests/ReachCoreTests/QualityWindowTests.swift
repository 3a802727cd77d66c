import ReachSupport
import ReachTesting
import Testing

@testable import ReachCore

/// The window keeps its measures as samples come and go (``QualityWindow``, ``SortedDurations``):
/// over random windows they must be what computing them from the whole window gives, as the
/// window did before it kept them.
struct QualityWindowTests {
    /// The measures of `samples` computed from scratch: the latencies copied and sorted, the
    /// jitters summed, the echoes counted.
    static func naiveMeasures(_ samples: [QualitySample]) -> QualityMeasures {
        let latencies = samples.compactMap(\.latency).sorted()
        let jitters = samples.compactMap(\.jitter)
        let sent = samples.map(\.sent).reduce(0, +)
        let received = samples.map(\.received).reduce(0, +)
        let middle = latencies.count / 2
        return QualityMeasures(
            latency: latencies.isEmpty
                ? nil
                : latencies.count.isMultiple(of: 2)
                    ? (latencies[middle - 1] + latencies[middle]) / 2 : latencies[middle],
            loss: sent > 0 ? Double(sent - received) / Double(sent) : nil,
            jitter: jitters.isEmpty ? nil : jitters.reduce(.zero, +) / jitters.count,
            samples: samples.count
        )
    }

    /// Random probes (answered or not, echo bursts or single requests, latencies that repeat,
    /// gaps that empty the window at once or keep it long) into windows of random lengths: after
    /// every sample, the kept measures equal the naive ones over the samples the window spans. Off
    /// the cooperative pool: seconds of CPU, which the tests waiting in real time beside it need.
    @Test func keptMeasuresAreTheNaiveOnesOverRandomWindows() async {
        await offPool { Self.checkRandomWindows() }
    }

    private static func checkRandomWindows() {
        var random = SeededGenerator(seed: 0x0051_DE57)
        func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        for _ in 0..<200 {
            let length = Duration.seconds(1 + below(40))
            var window = QualityWindow(length: length)
            var kept: [QualitySample] = []
            var now = WallTime(sinceEpoch: .seconds(1_000))
            for _ in 0..<(1 + below(300)) {
                let gap = below(20) == 0 ? below(60_000) : below(1_500)
                now = now.advanced(by: .milliseconds(gap))
                let burst = below(3) == 0
                let sent = burst ? 1 + below(10) : 1
                let received = below(5) == 0 ? 0 : 1 + below(sent)
                // Few distinct latencies, so that equal ones are inserted and removed.
                let latency = received == 0 ? nil : Duration.milliseconds(below(4) == 0 ? 100 : below(800))
                let jitter = burst && received > 1 ? Duration.microseconds(below(50_000)) : nil
                let sample = QualitySample(at: now, latency: latency, sent: sent, received: received, jitter: jitter)
                window.add(sample)
                kept.append(sample)
                kept.removeAll { $0.at.sinceEpoch <= now.sinceEpoch - length }
                #expect(window.measures == naiveMeasures(kept))
                #expect(window.count == kept.count)
            }
        }
    }

    @Test func sortedDurationsStayInOrderWithRepeatsAndGiveTheMiddle() {
        var sorted = SortedDurations()
        #expect(sorted.median == nil)
        for ms in [30, 10, 20, 10, 40] { sorted.insert(.milliseconds(ms)) }
        #expect(sorted.elements == [10, 10, 20, 30, 40].map(Duration.milliseconds))
        #expect(sorted.median == .milliseconds(20))
        sorted.remove(.milliseconds(10))
        #expect(sorted.elements == [10, 20, 30, 40].map(Duration.milliseconds))
        #expect(sorted.median == .milliseconds(25), "the mean of the two middle ones")
        for ms in [40, 10, 30, 20] { sorted.remove(.milliseconds(ms)) }
        #expect(sorted.elements.isEmpty)
        #expect(sorted.median == nil)
    }
}
