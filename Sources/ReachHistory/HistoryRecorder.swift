import Logging
import ReachAPI
import ReachConfig
import ReachCore
import ReachSupport
import Synchronization

/// Records one run of reachd into a ``HistoryStore``: verdict and target transitions as they are
/// published, and every probe result into its target's minute.
///
/// The probe path never waits on SQLite: ``probeFinished(_:result:)`` only counts the result into
/// memory under a lock. ``flush()`` commits what gathered in one transaction (the daemon calls it
/// every second, off the probe path); ``maintain()`` prunes by age and size. While the file cannot
/// be written (a full disk), what gathered waits in memory for the next commit, at most
/// ``maximumPending`` rows.
package final class HistoryRecorder: ProbeObserver, Sendable {
    package let store: HistoryStore
    package let settings: HistorySettings
    /// The rows kept in memory while commits fail; beyond it the oldest minutes go first, then the
    /// oldest transitions.
    package let maximumPending: Int
    /// An hour of minutes at 1,000 targets, plus the transitions: about 10 MB at most.
    package static let defaultMaximumPending = 65_536
    /// This run's id in the store.
    package let run: Int64
    private let clock: @Sendable () -> WallTime
    private let logger: Logger

    private struct State {
        var pending = HistoryBatch()
        var rollups: [String: MinuteRollup] = [:]
        var verdict: HistoryBatch.Transition?
        /// Each target's last recorded health and failure reason.
        var health: [String: TargetHealth] = [:]
        /// The verdict's last recorded quality (``HistoryStore/qualityScope``).
        var quality: HistoryBatch.Transition?
        /// Rows dropped over ``maximumPending`` since the last commit that worked.
        var dropped = 0
    }

    private let state = Mutex(State())

    /// Starts a run in `store` at `clock()`.
    package init(
        store: HistoryStore,
        settings: HistorySettings,
        clock: @escaping @Sendable () -> WallTime,
        logger: Logger,
        maximumPending: Int = HistoryRecorder.defaultMaximumPending
    ) async throws {
        self.store = store
        self.settings = settings
        self.maximumPending = maximumPending
        self.clock = clock
        self.logger = logger
        self.run = try await store.beginRun(at: clock().secondsSinceEpoch)
    }

    package func probeFinished(_ target: ProbeTarget, result: ProbeResult) {
        record(result)
    }

    package func probeSuperseded(_ target: ProbeTarget, result: ProbeResult) {
        record(result)
    }

    /// Counts `result` into its target's current minute; a result of a new minute closes the last one.
    package func record(_ result: ProbeResult) {
        let now = clock().secondsSinceEpoch
        let minute = MinuteRollup.minute(of: now)
        let latency = result.latency.seconds
        state.withLock { state in
            var rollup = state.rollups.removeValue(forKey: result.target) ?? MinuteRollup(start: minute)
            if rollup.start != minute {
                state.pending.minutes.append(rollup.finished(target: result.target))
                rollup = MinuteRollup(start: minute)
            }
            rollup.add(latency: latency, failure: result.failure?.reason.code)
            state.rollups[result.target] = rollup
        }
    }

    private struct TargetHealth: Equatable {
        var state: String
        var reason: String?
    }

    /// Records what changed since the last verdict: its state, reason, fault or failing target,
    /// and each target's health.
    package func record(_ verdict: Verdict) {
        let now = clock().secondsSinceEpoch
        state.withLock { state in
            let change = HistoryBatch.Transition(
                at: now,
                scope: "",
                state: verdict.state.rawValue,
                reason: verdict.reason.code,
                fault: verdict.fault?.code,
                target: verdict.reason.target
            )
            let last = state.verdict
            if last?.state != change.state || last?.reason != change.reason || last?.fault != change.fault
                || last?.target != change.target
            {
                // A state change happened at `since`; a new reason within the same state, now.
                var stamped = change
                if state.verdict?.state != change.state { stamped.at = min(now, verdict.since.secondsSinceEpoch) }
                state.verdict = change
                state.pending.transitions.append(stamped)
            }
            var quality = HistoryBatch.Transition(
                at: now,
                scope: HistoryStore.qualityScope,
                state: verdict.quality?.state.rawValue ?? "none",
                reason: verdict.quality.map { $0.exceeded.map(\.measure.rawValue).sorted().joined(separator: ",") },
                fault: verdict.quality?.fault?.code,
                target: verdict.quality?.target
            )
            let lastQuality = state.quality
            if lastQuality?.state != quality.state || lastQuality?.reason != quality.reason
                || lastQuality?.fault != quality.fault || lastQuality?.target != quality.target
            {
                if lastQuality?.state != quality.state, let since = verdict.quality?.since {
                    quality.at = min(now, since.secondsSinceEpoch)
                }
                // No quality from the start is no change worth a row.
                if lastQuality != nil || quality.state != "none" { state.pending.transitions.append(quality) }
                state.quality = quality
            }
            for target in verdict.targets {
                let reason = target.health == .unhealthy ? target.unhealthyReason : nil
                // A new reason within the same health is a transition too, as for the verdict.
                let health = TargetHealth(state: target.health.rawValue, reason: reason?.code)
                guard state.health[target.name] != health else { continue }
                state.health[target.name] = health
                state.pending.transitions.append(
                    HistoryBatch.Transition(
                        at: (target.lastCheckedAt ?? verdict.since).secondsSinceEpoch,
                        scope: target.name,
                        state: target.health.rawValue,
                        reason: reason?.code,
                        fault: reason.flatMap { Fault.of(Fault($0), kind: target.kind)?.code },
                        target: target.name
                    )
                )
            }
        }
    }

    /// Commits the transitions and finished minutes gathered since the last call, in one
    /// transaction, and moves this run's recorded end to now. With `closingMinutes`, the minutes
    /// still running are committed too (reachd is stopping). When the commit fails, its rows wait
    /// for the next call (at most ``maximumPending``).
    package func flush(closingMinutes: Bool = false) async throws(HistoryWriteFailure) {
        let now = clock().secondsSinceEpoch
        let minute = MinuteRollup.minute(of: now)
        let batch = state.withLock { state in
            // Minutes that are over even though no result of a later one arrived (a target removed, probing suspended).
            for (target, rollup) in state.rollups where closingMinutes || rollup.start < minute {
                state.pending.minutes.append(rollup.finished(target: target))
                state.rollups[target] = nil
            }
            var batch = state.pending
            state.pending = HistoryBatch()
            batch.seenAt = now
            return batch
        }
        do {
            try await store.write(batch, run: run)
        } catch {
            // Put it back for the next try, ahead of what arrived meanwhile, within the bound.
            let (dropped, before) = state.withLock { state in
                state.pending.transitions.insert(contentsOf: batch.transitions, at: 0)
                state.pending.minutes.insert(contentsOf: batch.minutes, at: 0)
                let dropped = state.pending.trim(to: maximumPending)
                defer { state.dropped += dropped }
                return (dropped, state.dropped)
            }
            if dropped > 0, before == 0 {
                logger.warning(
                    "history: more than \(maximumPending) rows wait for the file to be writable: dropping the oldest, minutes before transitions",
                    metadata: ["path": "\(store.path)"]
                )
            }
            throw error
        }
        let dropped = state.withLock { state in
            defer { state.dropped = 0 }
            return state.dropped
        }
        if dropped > 0 {
            logger.warning(
                "history: \(dropped) rows were dropped while the file could not be written",
                metadata: ["path": "\(store.path)"]
            )
        }
    }

    /// The rows waiting for the next commit: after a failed one, what it held and what came since.
    package var pendingRows: Int {
        state.withLock { $0.pending.count }
    }

    /// Deletes what is past retention or over the size cap (logging the latter), then returns the
    /// uptime ratio of each of ``uptimeWindows``, for `reachd_uptime_ratio`.
    package func maintain() async throws -> [(window: String, ratio: Double?)] {
        let now = clock()
        let deleted = try await store.prune(
            now: now.secondsSinceEpoch,
            retention: settings.retention,
            maximumSize: settings.maximumSize
        )
        if deleted > 0 {
            logger.warning(
                "the history file reached history.max_size: deleted its \(deleted) oldest rows",
                metadata: ["path": "\(store.path)", "max_size": "\(settings.maximumSize)"]
            )
        }
        var ratios: [(window: String, ratio: Double?)] = []
        for (name, span) in Self.uptimeWindows {
            let uptime = try await store.uptime(over: now.advanced(by: .zero - span)..<now, liveRun: run, now: now)
            ratios.append((name, uptime.ratio))
        }
        return ratios
    }

    /// The windows of `reachd_uptime_ratio`, by label.
    package static let uptimeWindows: [(String, Duration)] = [
        ("24h", .seconds(86_400)), ("7d", .seconds(7 * 86_400)), ("30d", .seconds(30 * 86_400)),
        ("90d", .seconds(90 * 86_400)),
    ]

    /// What was recorded over `query`'s window, this run included up to now.
    package func document(_ query: HistoryQuery) async throws -> HistoryDocument {
        try await store.document(query, liveRun: run, now: clock())
    }
}
