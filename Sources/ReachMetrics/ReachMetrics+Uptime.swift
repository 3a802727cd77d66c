import Prometheus

/// `reachd_uptime_ratio{window}`: the history's uptime over the last 24 h, 7 d, 30 d and 90 d, set
/// by the history service about once a minute (not per scrape: each value is a query of the store).
extension ReachMetrics {
    /// Sets the ratio of each window; a window without a ratio (no known time in it) has no series,
    /// so that a dashboard shows "no data" rather than a made-up 0 or 1.
    package func setUptimeRatios(_ ratios: [(window: String, ratio: Double?)]) {
        for (window, ratio) in ratios {
            let gauge = registry.makeGauge(descriptor: Self.uptimeRatioName, labels: [("window", window)])
            if let ratio { gauge.set(to: ratio) } else { registry.unregisterGauge(gauge) }
        }
    }

    /// Sets `reachd_history_pending_rows`: the rows waiting for the history file, after each commit
    /// (0 when the file keeps up; growing while it cannot be written, as on a full disk).
    package func setHistoryPendingRows(_ rows: Int) {
        registry.makeGauge(descriptor: Self.historyPendingRowsName).set(to: Double(rows))
    }
}
