import ReachSupport

extension HistoryDocument.Uptime {
    /// How `window` divides into connected, disconnected and unknown time: the one uptime
    /// computation, shared by the history document, `reachd_uptime_ratio` and the status page's bars.
    ///
    /// Unknown time is the union of `gaps` (reachd not running, or no verdict yet): it counts
    /// neither as uptime nor as downtime, so the ratio is `connected / (connected + disconnected)`
    /// and `nil` when the window has no known time. Disconnected time is the union of `outages`
    /// outside the gaps; the rest is connected. Spans may overlap, be unsorted, or reach outside the
    /// window: only their part inside it counts.
    package init(window: Range<WallTime>, outages: [Range<WallTime>], gaps: [Range<WallTime>]) {
        let bounds = window.lowerBound.secondsSinceEpoch..<window.upperBound.secondsSinceEpoch
        let unknown = Self.union(gaps, within: bounds)
        let down = Self.union(outages, within: bounds)
        let unknownSeconds = unknown.reduce(0) { $0 + $1.upperBound - $1.lowerBound }
        let downSeconds = down.reduce(0) { $0 + $1.upperBound - $1.lowerBound } - Self.overlap(down, unknown)
        let connectedSeconds = max(0, bounds.upperBound - bounds.lowerBound - unknownSeconds - downSeconds)
        let known = connectedSeconds + downSeconds
        self.init(
            ratio: known > 0 ? connectedSeconds / known : nil,
            connectedSeconds: connectedSeconds,
            disconnectedSeconds: downSeconds,
            unknownSeconds: unknownSeconds
        )
    }

    /// The spans clipped to `bounds`, sorted and merged where they touch.
    private static func union(_ spans: [Range<WallTime>], within bounds: Range<Double>) -> [Range<Double>] {
        let clipped = spans.compactMap { span -> Range<Double>? in
            let lower = max(span.lowerBound.secondsSinceEpoch, bounds.lowerBound)
            let upper = min(span.upperBound.secondsSinceEpoch, bounds.upperBound)
            return lower < upper ? lower..<upper : nil
        }.sorted { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Double>] = []
        for span in clipped {
            if let last = merged.last, span.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, span.upperBound)
            } else {
                merged.append(span)
            }
        }
        return merged
    }

    /// The length both sorted, disjoint span lists cover.
    private static func overlap(_ first: [Range<Double>], _ second: [Range<Double>]) -> Double {
        var total = 0.0
        var (i, j) = (0, 0)
        while i < first.count, j < second.count {
            total += max(
                0,
                min(first[i].upperBound, second[j].upperBound) - max(first[i].lowerBound, second[j].lowerBound)
            )
            if first[i].upperBound < second[j].upperBound { i += 1 } else { j += 1 }
        }
        return total
    }
}

extension HistoryDocument {
    /// The uptime of `window` (a part of this document's window: one of the page's bars) from the
    /// outages and gaps listed here; an open outage or gap lasts until ``until``.
    ///
    /// The lists keep the newest ``outageLimit`` and ``gapLimit`` entries, so a window older than
    /// the oldest listed entry may count less downtime than ``uptime`` did.
    package func uptime(over window: Range<WallTime>) -> Uptime {
        let end = RFC3339.wallTime(from: until) ?? window.upperBound
        func span(_ start: String, _ stop: String?) -> Range<WallTime>? {
            guard let lower = RFC3339.wallTime(from: start) else { return nil }
            let upper = stop.flatMap(RFC3339.wallTime(from:)) ?? end
            return lower < upper ? lower..<upper : nil
        }
        return Uptime(
            window: window,
            outages: outages.compactMap { span($0.start, $0.end) },
            gaps: gaps.compactMap { span($0.start, $0.end) }
        )
    }
}
