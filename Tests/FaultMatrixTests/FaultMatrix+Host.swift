import Foundation
import ReachTestRigs
import ReachTesting

/// What the host does to reachd besides its network: a netlink overrun while it is frozen, the
/// system going to sleep, the wall clock jumping.
extension FaultMatrix {
    /// reachd frozen (SIGSTOP) while thousands of link events overflow its netlink socket, then
    /// thawed with the link down: it must notice the overrun (ENOBUFS), dump the state again and
    /// say no_link, not the last thing it heard before the overflow.
    func netlinkOverrun(_ run: MatrixRun) async {
        let name = "netlink overrun (ENOBUFS): 3,000 flaps while frozen, thawed with the link down"
        var row = MatrixCase(group: "link", name: name, expected: "disconnected/no_link after the re-dump")
        let network = run.network
        let hooksBefore = run.daemon.hookRuns
        let start = ContinuousClock.now
        do {
            run.ledger.mark(.unsettled, at: start, bound: .zero, "\(name): frozen")
            run.daemon.signal(SIGSTOP)
            let flaps = (0..<3_000).flatMap { _ in ["link set m0 down", "link set m0 up"] }
            do {
                try await network.host.ipBatch(flaps + ["link set m0 down"])
            } catch {
                run.daemon.signal(SIGCONT)
                throw error
            }
            let thawed = ContinuousClock.now
            run.ledger.mark(.down, at: thawed, bound: MatrixRun.linkBound, name)
            run.daemon.signal(SIGCONT)
            if let seen = await run.observer.first(
                after: thawed,
                timeout: MatrixRun.linkBound,
                where: { $0.summary == "disconnected/no_link" }
            ) {
                row.detected = seen.at - thawed
            } else {
                row.failure =
                    "at +\(MatrixCase.seconds(MatrixRun.linkBound)) after the thaw the verdict was \(run.observer.latest?.summary ?? "none")"
            }
            if !run.daemon.log.contains("ENOBUFS") {
                row.failure = row.failure ?? "reachd did not log the overrun: the socket never overflowed"
            }
            let restoring = ContinuousClock.now
            run.ledger.mark(.unsettled, at: restoring, bound: .zero, "\(name): restoring")
            try await network.restoreLink()
            run.ledger.mark(.up, at: .now, bound: MatrixRun.restoreBound, "\(name): restored")
            await run.recordReturn(&row, since: restoring, of: "restoring")
            try await run.waitForAProbeLater()
            run.announcedGaps += run.observer.sequenceGaps(from: start, to: .now)
        } catch {
            row.failure = "the test could not act: \(error)"
        }
        await run.checkHooks(&row, since: start, before: hooksBefore)
        run.finish(row)
    }

    /// logind announces sleep: probing stops and the verdict holds (a sleeping host has no
    /// evidence either way). The server fails meanwhile; on waking reachd probes at once and says so.
    func systemSleep(_ run: MatrixRun) async {
        let name = "system sleep (PrepareForSleep), the server failing meanwhile, then wake"
        var row = MatrixCase(
            group: "reachd",
            name: name,
            expected: "probing stops, verdict held; disconnected/http_status on waking"
        )
        let start = ContinuousClock.now
        do {
            run.ledger.mark(.unsettled, at: start, bound: .zero, "\(name): asleep")
            let sleeps = run.daemon.log.components(separatedBy: "probing suspended").count
            try await run.logind.sleep()
            // reachd hears it (a probe in flight, on loopback, ends within a millisecond of this).
            try await waitUntil("reachd suspends probing", timeout: .seconds(10)) {
                run.daemon.log.components(separatedBy: "probing suspended").count > sleeps
            }
            let probesAsleep = await run.daemon.metric("reachd_probes_total") ?? -1
            try await run.server.set("503")
            try await Task.sleep(for: .seconds(3))  // three intervals asleep: the probe count across them must not move
            let probesLater = await run.daemon.metric("reachd_probes_total") ?? -1
            if probesLater != probesAsleep {
                row.failure = "probes went on while asleep: reachd_probes_total \(probesAsleep) → \(probesLater)"
            }
            if let moved = run.observer.all.first(where: { $0.at >= start && $0.state != "connected" }) {
                row.failure = row.failure ?? "published \(moved.summary) while asleep"
            }
            let woke = ContinuousClock.now
            run.ledger.mark(.down, at: woke, bound: MatrixRun.slack, name)
            try await run.logind.wake()
            if let seen = await run.observer.first(
                after: woke,
                timeout: MatrixRun.slack,
                where: { $0.summary == "disconnected/http_status" }
            ) {
                row.detected = seen.at - woke
            } else {
                row.failure =
                    row.failure
                    ?? "at +\(MatrixCase.seconds(MatrixRun.slack)) after waking the verdict was \(run.observer.latest?.summary ?? "none")"
            }
            let restoring = ContinuousClock.now
            try await run.server.set("ok")
            run.ledger.mark(.up, at: .now, bound: MatrixRun.restoreBound, "\(name): restored")
            await run.recordReturn(&row, since: restoring, of: "the server's return")
        } catch {
            row.failure = "the test could not act: \(error)"
        }
        run.finish(row)
    }

    /// The wall clock set an hour forward, then an hour back (as a late NTP sync or a bad RTC
    /// does): probing keeps its 1 s pace, latencies stay real, `since` keeps the moment it was
    /// stamped with, and a transition made meanwhile is stamped with the clock of its moment.
    func clockJumps(_ run: MatrixRun) async {
        var row = MatrixCase(
            group: "reachd",
            name: "wall clock set 1 h forward, then 1 h back",
            expected: "pace, latency and since unmoved"
        )
        let clock = WallClockJump()
        do {
            guard let before = await run.daemon.status(), let since = before["since"] as? String else {
                throw ChildProcess.Failed(description: "no status before the jumps")
            }
            for offset in [3_600, -3_600] {
                let start = ContinuousClock.now
                let probes = await run.daemon.metric("reachd_probes_total") ?? 0
                try clock.set(offset: offset)
                try await Task.sleep(for: .seconds(3))  // three intervals after the jump: pace and latency are measured across them
                let status = await run.daemon.status()
                let paced = (await run.daemon.metric("reachd_probes_total") ?? 0) - probes
                try clock.set(offset: 0)
                let jump = offset > 0 ? "+1 h" : "-1 h"
                if !(2...5).contains(paced) { row.failure = row.failure ?? "\(jump): \(Int(paced)) probes in 3 s" }
                if status?["since"] as? String != since {
                    row.failure = row.failure ?? "\(jump): since moved from \(since) to \(status?["since"] ?? "nil")"
                }
                if status?["likely_connected"] as? Bool != true {
                    row.failure = row.failure ?? "\(jump): likely_connected is not true"
                }
                let latencies = (status?["targets"] as? [[String: Any]] ?? []).compactMap {
                    $0["latency_seconds"] as? Double
                }
                if let slow = latencies.first(where: { $0 > 2.5 }) {
                    row.failure = row.failure ?? "\(jump): a latency of \(slow) s"
                }
                if let moved = run.observer.all.first(where: { $0.at >= start && $0.state != "connected" }) {
                    row.failure = row.failure ?? "\(jump): published \(moved.summary)"
                }
            }
            // A transition while the clock is an hour behind is stamped an hour behind: `since` is
            // the wall clock of the moment, and the detection time (monotonic) is unaffected.
            try clock.set(offset: -3_600)
            let applied = ContinuousClock.now
            run.ledger.mark(.down, at: applied, bound: MatrixRun.answerBound, "503 while the clock is 1 h behind")
            try await run.server.set("503")
            let seen = await run.observer.first(after: applied, timeout: MatrixRun.answerBound) {
                $0.state == "disconnected"
            }
            let stamped = ((await run.daemon.status())?["since"] as? String).flatMap(RFC3339Text.seconds(from:))
            let jumpedNow = Date().timeIntervalSince1970
            try clock.set(offset: 0)
            let restoring = ContinuousClock.now
            try await run.server.set("ok")
            run.ledger.mark(.up, at: .now, bound: MatrixRun.restoreBound, "503 while the clock is 1 h behind: restored")
            row.detected = seen.map { $0.at - applied }
            if seen == nil {
                row.failure =
                    row.failure
                    ?? "the 503 during the jump was not seen within \(MatrixCase.seconds(MatrixRun.answerBound))"
            }
            if seen != nil, abs((stamped ?? 0) - jumpedNow) > 10 {
                row.failure = row.failure ?? "since is \(stamped ?? 0), not the jumped clock's \(jumpedNow)"
            }
            await run.recordReturn(&row, since: restoring, of: "the server's return")
        } catch {
            try? clock.set(offset: 0)
            row.failure = "the test could not act: \(error)"
        }
        run.finish(row)
    }
}

/// Sets the machine's wall clock (CLOCK_REALTIME) relative to where it would be without the jumps,
/// measured on the monotonic clock, so that putting it back loses nothing.
struct WallClockJump {
    private let realAtStart: timespec
    private let monotonicAtStart: timespec

    init() {
        var real = timespec()
        var monotonic = timespec()
        clock_gettime(CLOCK_REALTIME, &real)
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        realAtStart = real
        monotonicAtStart = monotonic
    }

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    /// The true time plus `offset` seconds.
    func set(offset: Int) throws {
        var monotonic = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        var nanoseconds = Int(realAtStart.tv_nsec) + Int(monotonic.tv_nsec) - Int(monotonicAtStart.tv_nsec)
        var seconds = Int(realAtStart.tv_sec) + Int(monotonic.tv_sec) - Int(monotonicAtStart.tv_sec) + offset
        seconds += nanoseconds.floorDivided(by: 1_000_000_000)
        nanoseconds = nanoseconds.floorModulo(1_000_000_000)
        var target = timespec(tv_sec: seconds, tv_nsec: nanoseconds)
        guard clock_settime(CLOCK_REALTIME, &target) == 0 else {
            throw Failed(description: "clock_settime: errno \(errno) (needs CAP_SYS_TIME)")
        }
    }
}

extension Int {
    fileprivate func floorDivided(by divisor: Int) -> Int { (self - floorModulo(divisor)) / divisor }
    fileprivate func floorModulo(_ divisor: Int) -> Int { ((self % divisor) + divisor) % divisor }
}

/// Reads reachd's `since` (RFC 3339 in UTC, `2026-11-23T14:47:05.123Z`) as seconds since the epoch.
enum RFC3339Text {
    static func seconds(from text: String) -> Double? {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return format.date(from: text)?.timeIntervalSince1970
    }
}
