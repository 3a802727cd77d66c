import Foundation
import ReachTestRigs
import ReachTesting

/// Drives one reachd through faults and keeps the record: the truth ledger, the verdicts seen,
/// one table row per case.
final class MatrixRun {
    /// reachd's probe cadence and deadline (its defaults, which the matrix configuration keeps).
    static let interval: Duration = .seconds(1)
    static let timeout: Duration = .seconds(2)
    /// Slack for a loaded 2-core machine on top of every bound: scheduling, process start-up, curl.
    static let slack: Duration = .milliseconds(1_000)
    /// A link fault is reported by the kernel and decided at once.
    static let linkBound: Duration = slack
    /// Carrier changes reach netlink through the kernel's linkwatch, which holds them up to 1 s
    /// after the previous one.
    static let carrierBound: Duration = .seconds(1) + slack
    static let restoreCarrierBound: Duration = .seconds(1) + interval + slack
    /// A server answering wrongly (503, refused, garbage, DNS) is seen at the next probe.
    static let answerBound: Duration = interval + slack
    /// A server answering nothing is seen when the next probe's deadline passes.
    static let silenceBound: Duration = interval + timeout + slack
    /// Restoring takes the settle window and one probe, or, after a hung probe, its deadline too.
    static let restoreBound: Duration = interval + slack
    static let restoreAfterHangBound: Duration = interval + timeout + slack

    let network: MatrixNetwork
    /// The system bus reachd listens on, with a logind stand-in that announces sleep.
    let bus: PrivateSystemBus
    let logind: LogindStandIn
    let server: FaultServer
    var grpc: GRPCFaultServer
    var daemon: MatrixDaemon
    var observer: VerdictObserver
    var ledger = TruthLedger()
    var cases: [MatrixCase] = []
    var peakResidentKiB = 0
    /// Sequence gaps inside storms, where a subscriber may skip ahead to the latest verdict.
    var announcedGaps = 0
    /// Hook runs that did not match the transitions the subscriber saw.
    var hookMismatches = 0
    private var runs = 1
    /// The log file of the reachd running when the current case began, and how long it was then.
    private var caseLog: (path: String, length: Int)?

    init(
        network: MatrixNetwork,
        bus: PrivateSystemBus,
        logind: LogindStandIn,
        server: FaultServer,
        grpc: GRPCFaultServer,
        directory: String
    ) async throws {
        self.network = network
        self.bus = bus
        self.logind = logind
        self.server = server
        self.grpc = grpc
        daemon = try await MatrixDaemon(directory: directory, network: network, run: 1, systemBus: bus.address)
        try await daemon.waitForLog("reachd running")
        try await waitUntil("the unix socket is there", timeout: .seconds(20)) {
            FileManager.default.fileExists(atPath: directory + "/reachd.sock")
        }
        observer = try VerdictObserver(socket: daemon.socketPath)
        guard
            await observer.first(after: .now - .seconds(60), timeout: .seconds(20), where: { $0.state == "connected" })
                != nil
        else {
            throw ChildProcess.Failed(description: "reachd never said connected at start; its log:\n\(daemon.log)")
        }
        ledger.mark(.up, at: .now, bound: .zero, "start")
    }

    /// Applies a fault that makes the server unreachable, expects `disconnected/<reason>` within
    /// `bound`, holds it, restores, and expects `connected` within `restoreBound`.
    func fault(
        _ group: String,
        _ name: String,
        reason: String,
        bound: Duration,
        restoreBound: Duration = MatrixRun.restoreBound,
        apply: () async throws -> Void,
        restore: () async throws -> Void
    ) async {
        var row = MatrixCase(group: group, name: name, expected: "disconnected/\(reason)")
        beginCase()
        let hooksBefore = daemon.hookRuns
        let start = ContinuousClock.now
        do {
            ledger.mark(.down, at: .now, bound: bound, name)
            let applied = ContinuousClock.now
            try await apply()
            if let seen = await observer.first(
                after: applied,
                timeout: bound,
                where: { $0.state == "disconnected" && $0.reason == reason }
            ) {
                row.detected = seen.at - applied
            } else {
                row.failure =
                    "at +\(MatrixCase.seconds(bound)) after the fault the verdict was \(observer.latest?.summary ?? "none"), not disconnected/\(reason)"
            }
            try await Task.sleep(for: .milliseconds(300))  // the fault held a moment past its detection: a stimulus, every event in it is recorded
            // The truth is in between while the restoring commands run, and up once they are done.
            let restoring = ContinuousClock.now
            // No fault guessed, then corrected: while the network stays as the fault left it, every
            // disconnected event says one fault, or none while it is not known yet.
            let faults = observer.faultsTold(from: applied, until: restoring)
            if Set(faults.map(\.fault)).count > 1 {
                let told = faults.map { "+\(MatrixCase.seconds(Optional($0.at - applied))) \($0.faultAndReason)" }
                row.failure = row.failure ?? "the fault changed while the network did not: \(told)"
            }
            ledger.mark(.unsettled, at: restoring, bound: .zero, "\(name): restoring")
            try await restore()
            ledger.mark(.up, at: .now, bound: restoreBound, "\(name): restored")
            if let back = await observer.first(
                after: restoring,
                timeout: restoreBound,
                where: { $0.state == "connected" }
            ) {
                row.restored = back.at - restoring
            } else {
                row.failure =
                    row.failure
                    ?? "at +\(MatrixCase.seconds(restoreBound)) after restoring the verdict was \(observer.latest?.summary ?? "none"), not connected"
                _ = await observer.first(after: restoring, timeout: .seconds(10), where: { $0.state == "connected" })
            }
        } catch {
            row.failure = "the test could not act: \(error)"
        }
        await checkHooks(&row, since: start, before: hooksBefore)
        finish(row)
    }

    /// A change that must not disturb the verdict (a server slow but within the deadline).
    func steady(
        _ group: String,
        _ name: String,
        hold: Duration,
        apply: () async throws -> Void,
        restore: () async throws -> Void
    ) async {
        var row = MatrixCase(group: group, name: name, expected: "connected throughout")
        beginCase()
        do {
            let start = ContinuousClock.now
            try await apply()
            try await Task.sleep(for: hold)  // the change held for its length; every verdict in it is recorded and checked below
            try await restore()
            if let wrong = observer.all.first(where: { $0.at >= start && $0.state != "connected" }) {
                row.failure = "at +\(MatrixCase.seconds(wrong.at - start)) the verdict was \(wrong.summary)"
            }
        } catch {
            row.failure = "the test could not act: \(error)"
        }
        finish(row)
    }

    /// A storm (link flaps, a restarting server): judged by where it ends, within `bound` of its end,
    /// and by hooks ending on the final state.
    func storm(_ group: String, _ name: String, bound: Duration, _ body: () async throws -> Void) async {
        var row = MatrixCase(group: group, name: name, expected: "ends connected")
        beginCase()
        let hooksBefore = daemon.hookRuns
        let start = ContinuousClock.now
        do {
            ledger.mark(.unsettled, at: start, bound: .zero, name)
            try await body()
            ledger.mark(.up, at: .now, bound: bound, "\(name): over")
            let ended = ContinuousClock.now
            // The verdict may never have moved (a storm faster than the probes): what counts is where it ends.
            let settled =
                (try? await waitUntil("connected after the storm", timeout: bound) {
                    self.observer.latest?.state == "connected"
                }) != nil
            if settled, let latest = observer.latest {
                row.restored = max(latest.at - ended, .zero)
            } else {
                row.failure =
                    "at +\(MatrixCase.seconds(bound)) after the storm the verdict was \(observer.latest?.summary ?? "none")"
            }
            await checkHooks(&row, since: start, before: hooksBefore)
            let gaps = observer.sequenceGaps(from: start, to: .now)
            announcedGaps += gaps
            let moves = observer.transitions(from: start, to: .now)
            row.expected = "ends connected (saw \(moves.lost) lost, \(moves.restored) restored, \(gaps) skipped)"
        } catch {
            row.failure = "the test could not act: \(error)"
        }
        finish(row)
    }

    /// Hooks ran exactly once per transition the subscriber saw since `start` (waiting a little for
    /// the last ones to run).
    func checkHooks(
        _ row: inout MatrixCase,
        since start: ContinuousClock.Instant,
        before: (restored: Int, lost: Int)
    ) async {
        let seen = observer.transitions(from: start, to: .now + .seconds(3600))
        let matched =
            (try? await waitUntil("hooks ran", timeout: .seconds(5)) {
                let now = self.daemon.hookRuns
                return (now.restored - before.restored, now.lost - before.lost) == (seen.restored, seen.lost)
            }) != nil
        if !matched {
            let now = daemon.hookRuns
            hookMismatches += 1
            row.failure =
                row.failure
                ?? "hooks ran restored \(now.restored - before.restored) / lost \(now.lost - before.lost) times for \(seen.restored) / \(seen.lost) transitions"
        }
    }

    /// Records in `row` how long after `restoring` the verdict was connected again, or that it was
    /// not within ``restoreBound`` of `what` (as "the server's return").
    func recordReturn(_ row: inout MatrixCase, since restoring: ContinuousClock.Instant, of what: String) async {
        if let back = await observer.first(
            after: restoring,
            timeout: Self.restoreBound,
            where: { $0.state == "connected" }
        ) {
            row.restored = back.at - restoring
        } else {
            row.failure = row.failure ?? "not connected within \(MatrixCase.seconds(Self.restoreBound)) of \(what)"
        }
    }

    /// Waits until reachd has finished two more probes than it had now, so at least one probe
    /// started and ended after now: what proves that a moment passed without something happening.
    func waitForAProbeLater() async throws {
        let before = await daemon.metric("reachd_probes_total") ?? 0
        try await waitUntil("two more probes", timeout: .seconds(15), every: .milliseconds(50)) {
            (await self.daemon.metric("reachd_probes_total") ?? 0) >= before + 2
        }
    }

    /// Marks where the case about to run begins in reachd's log: a case that fails prints the log from there.
    func beginCase() {
        caseLog = (daemon.logPath, daemon.log.utf8.count)
    }

    func finish(_ row: MatrixCase) {
        peakResidentKiB = max(peakResidentKiB, daemon.peakResidentKiB)
        cases.append(row)
        print(
            "fault matrix: \(row.group) / \(row.name): \(row.failure.map { "FAIL \($0)" } ?? "ok") (detected \(MatrixCase.seconds(row.detected)), restored \(MatrixCase.seconds(row.restored)))"
        )
        // The log is in the matrix's scratch directory, removed with it: a failed case keeps its part in the output.
        if !row.passed, let (path, start) = caseLog, path == daemon.logPath {
            print(
                "fault matrix: reachd's log during \(row.group) / \(row.name):\n\(String(decoding: Array(daemon.log.utf8.dropFirst(start)), as: UTF8.self))"
            )
        }
        caseLog = nil
    }

    /// Seconds the verdict contradicted the truth beyond the bounds: (false connected, false disconnected, the stretches).
    func accounting() -> (falseConnected: Double, falseDisconnected: Double, details: [TruthLedger.Disagreement]) {
        let verdicts = observer.all
        let found = ledger.disagreements(
            until: .now,
            verdict: { self.observer.verdict(at: $0) },
            changes: verdicts.map(\.at)
        )
        let connected = found.filter { $0.truth == .down }.map { MatrixCase.seconds($0.duration) }.reduce(0, +)
        let disconnected = found.filter { $0.truth == .up }.map { MatrixCase.seconds($0.duration) }.reduce(0, +)
        return (connected, disconnected, found)
    }

    /// Starts another reachd on the same configuration and directory (after the last one ended).
    func restartDaemon() async throws -> MatrixDaemon {
        runs += 1
        daemon = try await MatrixDaemon(
            directory: daemon.directory,
            network: network,
            run: runs,
            systemBus: bus.address
        )
        try await daemon.waitForLog("reachd running")
        return daemon
    }
}
