import ReachAPI
import ReachCore
import ReachSupport

extension HistoryStore {
    /// The record of `query`'s window as a ``ReachAPI/HistoryDocument``.
    ///
    /// - Parameters:
    ///   - liveRun: This run of reachd, whose recording reaches up to `now` (its file lags by up to a batch).
    ///   - now: The time of the answer: what is still open is open up to here.
    package func document(_ query: HistoryQuery, liveRun: Int64?, now: WallTime) async throws -> HistoryDocument {
        let window = query.window
        let scope = query.target ?? ""
        let (since, until) = (window.lowerBound.secondsSinceEpoch, window.upperBound.secondsSinceEpoch)
        return try await pool.read { db in
            let timeline = try Self.timeline(
                db,
                scope: scope,
                from: since,
                to: until,
                liveRun: liveRun,
                now: now.secondsSinceEpoch
            )
            let transitions = try SQLiteRow.fetchAll(
                db,
                sql: """
                    SELECT at, state, reason, fault, target FROM transition WHERE scope = ? AND at >= ? AND at < ?
                    ORDER BY at DESC, id DESC LIMIT ?
                    """,
                arguments: [scope, since, until, HistoryDocument.transitionLimit]
            ).reversed().map { row in
                HistoryDocument.Transition(
                    at: Self.text(row["at"]),
                    state: row["state"],
                    reason: row["reason"],
                    fault: row["fault"],
                    target: row["target"]
                )
            }
            let minutes = try Self.minutes(db, target: query.target, from: since, to: until)
            // The verdict's impaired spells; a target's quality is not recorded on its own.
            let impaired =
                query.target != nil
                ? []
                : try Self.timeline(
                    db,
                    scope: HistoryStore.qualityScope,
                    from: since,
                    to: until,
                    liveRun: liveRun,
                    now: now.secondsSinceEpoch,
                    spellStates: [QualityState.impaired.rawValue]
                ).outages
            let uptime = Self.uptime(timeline, window: window, now: now.secondsSinceEpoch)
            return HistoryDocument(
                since: RFC3339.string(from: window.lowerBound),
                until: RFC3339.string(from: window.upperBound),
                target: query.target,
                transitions: transitions,
                outages: timeline.outages.suffix(HistoryDocument.outageLimit).map { Self.outage($0, until: until) },
                gaps: timeline.gaps.suffix(HistoryDocument.gapLimit).map {
                    HistoryDocument.Gap(start: Self.text($0.start), end: $0.end.map(Self.text))
                },
                uptime: uptime,
                minutes: minutes,
                impaired: impaired.suffix(HistoryDocument.outageLimit).map { Self.outage($0, until: until) }
            )
        }
    }

    /// The scope of the verdict's quality changes in the `transition` table: not a target's name,
    /// which cannot hold `#`.
    package static let qualityScope = "#quality"

    private static func outage(_ spell: Spell, until: Double) -> HistoryDocument.Outage {
        HistoryDocument.Outage(
            start: text(spell.start),
            end: spell.end.map(text),
            durationSeconds: max(0, (spell.end ?? until) - spell.start),
            reason: spell.reason,
            fault: spell.fault,
            target: spell.target
        )
    }

    /// The verdict's uptime over `window` alone: what `reachd_uptime_ratio` needs, without listing anything.
    package func uptime(
        over window: Range<WallTime>,
        liveRun: Int64?,
        now: WallTime
    ) async throws -> HistoryDocument.Uptime {
        let (since, until) = (window.lowerBound.secondsSinceEpoch, window.upperBound.secondsSinceEpoch)
        return try await pool.read { db in
            let timeline = try Self.timeline(
                db,
                scope: "",
                from: since,
                to: until,
                liveRun: liveRun,
                now: now.secondsSinceEpoch
            )
            return Self.uptime(timeline, window: window, now: now.secondsSinceEpoch)
        }
    }

    /// The uptime of `window` from a timeline: an open outage lasts until `now`, an open gap to the window's end.
    private static func uptime(
        _ timeline: (outages: [Spell], gaps: [Spell]),
        window: Range<WallTime>,
        now: Double
    ) -> HistoryDocument.Uptime {
        let until = window.upperBound.secondsSinceEpoch
        return HistoryDocument.Uptime(
            window: window,
            outages: timeline.outages.map { range($0.start, $0.end ?? now) },
            gaps: timeline.gaps.map { range($0.start, $0.end ?? until) }
        )
    }

    /// A spell of one kind: an outage (with how it began) or a gap. `end` is `nil` while it lasts.
    struct Spell {
        var start: Double
        var end: Double?
        var reason: String?
        var fault: String?
        var target: String?
    }

    /// The outages and gaps of `scope` overlapping `from..<to`, oldest first: each run of reachd
    /// starts unknown and follows its transitions to its recorded end (`now` for the live run);
    /// time outside every run is a gap. An outage is a spell in one of `spellStates`.
    static func timeline(
        _ db: SQLiteConnection,
        scope: String,
        from: Double,
        to: Double,
        liveRun: Int64?,
        now: Double,
        spellStates: Set<String> = ["disconnected", "unhealthy"]
    )
        throws -> (outages: [Spell], gaps: [Spell])
    {
        let runs = try SQLiteRow.fetchAll(
            db,
            sql:
                "SELECT id, started_at, last_seen_at FROM run WHERE last_seen_at >= ? AND started_at < ? ORDER BY started_at",
            arguments: [from, to]
        )
        var outages: [Spell] = []
        var gaps: [Spell] = []
        func add(_ spell: Spell, to list: inout [Spell]) {
            // Spells that touch (an outage whose reason changed, a gap between runs) are one.
            if let last = list.last, let end = last.end, end >= spell.start {
                list[list.count - 1].end = spell.end.map { max($0, end) }
            } else {
                list.append(spell)
            }
        }
        var covered = from
        for run in runs {
            let id: Int64 = run["id"]
            let isLive = id == liveRun
            let start: Double = run["started_at"]
            let end: Double = isLive ? max(now, run["last_seen_at"]) : run["last_seen_at"]
            if start > covered { add(Spell(start: covered, end: start), to: &gaps) }
            covered = max(covered, end)
            let changes = try SQLiteRow.fetchAll(
                db,
                sql:
                    "SELECT at, state, reason, fault, target FROM transition WHERE scope = ? AND run = ? AND at < ? ORDER BY at, id",
                arguments: [scope, id, to]
            )
            var spellStart = start
            var state = "unknown"
            var causes = SpellCauses()
            func close(at time: Double, open: Bool) {
                guard time > spellStart || open else { return }
                let cause = causes.longestHeld(until: time)
                let spell = Spell(
                    start: spellStart,
                    end: open ? nil : time,
                    reason: cause.reason,
                    fault: cause.fault,
                    target: cause.target
                )
                if state == "unknown" {
                    add(spell, to: &gaps)
                } else if spellStates.contains(state) {
                    add(spell, to: &outages)
                }
            }
            for change in changes {
                let at: Double = change["at"]
                let next: String = change["state"]
                let cause = SpellCauses.Cause(
                    reason: change["reason"],
                    fault: change["fault"],
                    target: change["target"]
                )
                // The same state again (an outage whose reason changed) continues the spell.
                if next == state {
                    causes.change(to: cause, at: at)
                    continue
                }
                close(at: at, open: false)
                (spellStart, state) = (at, next)
                causes = SpellCauses(first: cause, at: at)
            }
            close(at: end, open: isLive && end >= now)
        }
        if covered < to { add(Spell(start: covered, end: to >= now ? nil : to), to: &gaps) }
        let overlapping = { (spell: Spell) in (spell.end ?? .infinity) > from && spell.start < to }
        return (outages.filter(overlapping), gaps.filter(overlapping))
    }

    private static func minutes(
        _ db: SQLiteConnection,
        target: String?,
        from: Double,
        to: Double
    ) throws -> [HistoryDocument.Minute] {
        let rows: [SQLiteRow]
        if let target {
            rows = try SQLiteRow.fetchAll(
                db,
                sql: "SELECT * FROM minute WHERE target = ? AND start >= ? AND start < ? ORDER BY start DESC LIMIT ?",
                arguments: [target, Int64(from.rounded(.down)), to, HistoryDocument.targetMinuteLimit]
            )
        } else {
            let start = max(from, to - HistoryDocument.allTargetsMinuteSpan.seconds)
            rows = try SQLiteRow.fetchAll(
                db,
                sql: "SELECT * FROM minute WHERE start >= ? AND start < ? ORDER BY start DESC, target LIMIT ?",
                arguments: [Int64(start.rounded(.down)), to, HistoryDocument.allTargetsMinuteLimit]
            )
        }
        return rows.reversed().map { row in
            let failures = (try? APIJSON.decode([String: Int].self, from: (row["failures"] as String).utf8)) ?? [:]
            return HistoryDocument.Minute(
                target: row["target"],
                start: text(Double(row["start"] as Int64)),
                probes: row["probes"],
                failures: failures,
                latencyP50Seconds: row["latency_p50"],
                latencyP99Seconds: row["latency_p99"]
            )
        }
    }

    private static func text(_ seconds: Double) -> String {
        RFC3339.string(from: WallTime(sinceEpoch: .nanoseconds(Int64((seconds * 1e9).rounded()))))
    }

    private static func range(_ start: Double, _ end: Double) -> Range<WallTime> {
        let time = { (seconds: Double) in WallTime(sinceEpoch: .nanoseconds(Int64((seconds * 1e9).rounded()))) }
        return time(start)..<time(max(start, end))
    }
}
