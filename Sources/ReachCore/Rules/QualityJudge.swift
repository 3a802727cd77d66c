import ReachSupport

/// Judges one target's quality from its window, with hysteresis so that a busy machine does not
/// flap (after SmokePing's alarms, which rise for 3 rounds and clear for 5):
/// - a measure becomes impaired once it is past its budget at ``evaluationsToImpair`` (3)
///   evaluations in a row, and good again once it is under ``clearingShare`` (0.7) × the budget
///   at ``evaluationsToClear`` (5) in a row; between the two it stays as it was;
/// - a measure not judged yet is good at its first evaluation within its budget (there is no
///   established state to protect), impaired after 3 past it;
/// - every probe result is one evaluation, once the window holds enough samples (half the probes
///   the window spans, 3 at the least): before that the target has no quality (`nil`);
/// - the target is impaired while any measure is, good when no measure is impaired or deciding
///   and one is good; a measure without a value in the window (no answered probe for latency, no
///   echo burst for jitter) is not evaluated and keeps its state.
package struct QualityJudge: Sendable {
    package static let evaluationsToImpair = 3
    package static let evaluationsToClear = 5
    package static let clearingShare = 0.7
    /// The measures in their order, taken once.
    private static let allMeasures = QualityMeasure.allCases

    private struct MeasureState: Sendable, Hashable {
        var judged: QualityState?
        var pastInARow = 0
        var underInARow = 0
        /// The last value evaluated: what an impaired measure reports while its window has none.
        var lastValue: Double?

        mutating func judge(_ value: Double, limit: Double) {
            lastValue = value
            pastInARow = value > limit ? pastInARow + 1 : 0
            underInARow = value < limit * QualityJudge.clearingShare ? underInARow + 1 : 0
            switch judged {
            case nil:
                if value <= limit {
                    judged = .good
                } else if pastInARow >= QualityJudge.evaluationsToImpair {
                    judged = .impaired
                }
            case .good:
                if pastInARow >= QualityJudge.evaluationsToImpair { judged = .impaired }
            case .impaired:
                if underInARow >= QualityJudge.evaluationsToClear { judged = .good }
            }
        }
    }

    /// One state per measure, each judged only when it has a budget: what a dictionary keyed by
    /// measure would hold, without hashing on every probe.
    private struct MeasureStates: Sendable {
        var latency = MeasureState()
        var loss = MeasureState()
        var jitter = MeasureState()

        subscript(_ measure: QualityMeasure) -> MeasureState {
            get {
                switch measure {
                case .latency: latency
                case .loss: loss
                case .jitter: jitter
                }
            }
            set {
                switch measure {
                case .latency: latency = newValue
                case .loss: loss = newValue
                case .jitter: jitter = newValue
                }
            }
        }
    }

    package let budget: QualityBudget
    package let minimumSamples: Int
    private(set) var window: QualityWindow
    private var states = MeasureStates()
    /// The target's quality after the last evaluation.
    package private(set) var quality: TargetQuality?
    package private(set) var measures = QualityMeasures()

    /// - Parameters:
    ///   - interval: The target's probe interval, from which the window's expected samples follow.
    ///   - minimumSamples: Overrides the samples the window must hold before it is judged.
    package init(budget: QualityBudget, interval: Duration, minimumSamples: Int? = nil) {
        self.budget = budget
        self.window = QualityWindow(length: budget.window)
        let expected = interval > .zero ? Int(budget.window / interval) : 0
        self.minimumSamples = minimumSamples ?? max(3, expected / 2)
    }

    /// Takes one probe's sample and judges again; returns whether the quality's state or its
    /// measures past their budget changed.
    @discardableResult
    package mutating func evaluate(_ sample: QualitySample) -> Bool {
        window.add(sample)
        measures = window.measures
        guard budget.judgesAnything, window.count >= minimumSamples else { return false }
        for measure in Self.allMeasures {
            guard let limit = budget.limit(measure), let value = measures.value(measure) else { continue }
            states[measure].judge(value, limit: limit)
        }
        return settle(at: sample.at)
    }

    private mutating func settle(at now: WallTime) -> Bool {
        var impaired: [QualityFinding] = []
        var (deciding, anyGood) = (false, false)
        for measure in Self.allMeasures {
            let state = states[measure]
            switch state.judged {
            case .impaired:
                if let value = state.lastValue, let limit = budget.limit(measure) {
                    impaired.append(QualityFinding(measure: measure, value: value, budget: limit))
                }
            case .good: anyGood = true
            case nil: deciding = deciding || state.pastInARow > 0
            }
        }
        let next: QualityState? = !impaired.isEmpty ? .impaired : deciding ? nil : anyGood ? .good : nil
        let before = quality
        guard let next else {
            quality = nil
            return before != nil
        }
        let since = before?.state == next ? before?.since ?? now : now
        quality = TargetQuality(state: next, exceeded: impaired, since: since)
        guard let before else { return true }
        return before.state != next || !before.exceeded.elementsEqual(impaired) { $0.measure == $1.measure }
    }
}
