/// What the test did, when, and what that makes true: the observer's half of the record, laid
/// beside the verdicts reachd published to count the seconds they disagreed.
///
/// Each entry opens a period that lasts until the next: `up` (the server can be reached: the verdict
/// should be connected), `down` (it cannot: disconnected), or `unsettled` (a storm or a restart
/// in progress, judged only by where it ends). Each period carries its detection bound, the time
/// reachd is allowed to take to notice; only disagreement beyond it counts.
struct TruthLedger {
    enum Truth: String { case up, down, unsettled }

    struct Period {
        var start: ContinuousClock.Instant
        var truth: Truth
        var bound: Duration
        var label: String
    }

    private(set) var periods: [Period] = []

    mutating func mark(_ truth: Truth, at start: ContinuousClock.Instant, bound: Duration, _ label: String) {
        periods.append(Period(start: start, truth: truth, bound: bound, label: label))
    }

    /// A disagreement beyond the bound: when it began, how long it lasted, what was true, what reachd said.
    struct Disagreement {
        var at: ContinuousClock.Instant
        var duration: Duration
        var label: String
        var truth: Truth
        var verdict: String
    }

    /// Every stretch in `[first mark, end)` where the verdict contradicted the truth after the
    /// period's bound had passed. `verdict(at:)` gives the verdict in force at an instant.
    func disagreements(
        until end: ContinuousClock.Instant,
        verdict: (ContinuousClock.Instant) -> ObservedVerdict?,
        changes: [ContinuousClock.Instant]
    ) -> [Disagreement] {
        var found: [Disagreement] = []
        for (index, period) in periods.enumerated() where period.truth != .unsettled {
            let periodEnd = index + 1 < periods.count ? periods[index + 1].start : end
            let judged = period.start + period.bound
            guard judged < periodEnd else { continue }
            // The verdict is constant between the instants it changed: walk those pieces.
            let cuts = [judged] + changes.filter { $0 > judged && $0 < periodEnd }.sorted() + [periodEnd]
            for (from, to) in zip(cuts, cuts.dropFirst()) where to > from {
                guard let said = verdict(from) else { continue }
                let wrong = period.truth == .up ? said.state != "connected" : said.state == "connected"
                guard wrong else { continue }
                if let last = found.last, last.label == period.label, last.at + last.duration == from,
                    last.verdict == said.summary
                {
                    found[found.count - 1].duration += to - from
                } else {
                    found.append(
                        Disagreement(
                            at: from,
                            duration: to - from,
                            label: period.label,
                            truth: period.truth,
                            verdict: said.summary
                        )
                    )
                }
            }
        }
        return found
    }
}
