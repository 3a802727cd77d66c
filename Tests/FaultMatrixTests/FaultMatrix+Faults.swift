import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// Whose fault: reachd in the host namespace of an ``UplinkTopology`` (two uplinks, routers, a
/// server namespace with a real resolver), with the shipped `upstream.check: resolver` (the
/// resolver is beyond the routers), each fault applied for real and the verdict's `fault` checked
/// with its detection time. The truth ledger counts false-connected seconds as the main matrix does.
extension FaultMatrix {
    /// A gateway that falls silent is told within 10 s (the issue's bound) while probes fail.
    static let gatewayBound: Duration = .seconds(10)
    /// Without ping sockets only the neighbour table tells: `REACHABLE` for base_reachable_time
    /// (15–45 s), then `STALE`, `DELAY` (5 s), 3 probes of 1 s, `FAILED`: 53 s at worst, the
    /// kernel's own timers, plus reachd's round; measured 32 s and 52 s.
    static let neighbourBound: Duration = .seconds(70)
    /// A fault placed by the upstream reference: the probe's deadline, then a round (the reference's
    /// connect, within the same deadline).
    static let upstreamBound: Duration = MatrixRun.silenceBound + MatrixRun.timeout

    @Test(.timeLimit(.minutes(8)), .enabled(if: UplinkTopology.isAvailable, "needs dnsmasq"))
    func everyFaultIsToldWhereThePathBreaks() async throws {
        let began = ContinuousClock.now
        let scratch = try TemporaryDirectory("faults")
        let topology = try await UplinkTopology.make()
        var daemon: MatrixDaemon?
        var observer: VerdictObserver?
        do {
            let configuration = """
                socket: \(scratch.path)/reachd.sock
                listen: 127.0.0.1:0
                targets:
                  - name: server
                    url: \(UplinkTopology.serverURL)
                hooks:
                  restored_dir: \(scratch.path)/restored.d
                  lost_dir: \(scratch.path)/lost.d
                """
            let started = try await MatrixDaemon(
                directory: scratch.path,
                namespace: topology.host,
                configuration: configuration,
                run: 1,
                systemBus: nil
            )
            daemon = started
            try await started.waitForLog("reachd running")
            try await waitUntil("the unix socket is there", timeout: .seconds(20)) {
                FileManager.default.fileExists(atPath: started.socketPath)
            }
            let watching = try VerdictObserver(socket: started.socketPath)
            observer = watching
            guard await watching.first(after: began, timeout: .seconds(20), where: { $0.state == "connected" }) != nil
            else {
                throw ChildProcess.Failed(description: "reachd never said connected at start; its log:\n\(started.log)")
            }
            let run = FaultRun(topology: topology, daemon: started, observer: watching)
            await faultCases(run)
            let (falseConnected, details) = run.falseConnected()
            for stretch in details {
                Issue.record(
                    "\(stretch.label): for \(MatrixCase.seconds(stretch.duration)) the verdict was \(stretch.verdict) while the truth was \(stretch.truth)"
                )
            }
            print("\n" + MatrixCase.table(run.cases))
            print(
                String(
                    format:
                        "fault matrix (whose fault): %d/%d cases passed, false-connected seconds = %.2f (wall time %.0f s)",
                    run.cases.filter(\.passed).count,
                    run.cases.count,
                    falseConnected,
                    MatrixCase.seconds(ContinuousClock.now - began)
                )
            )
            for row in run.cases where !row.passed {
                Issue.record("\(row.group) / \(row.name): \(row.failure ?? "")")
            }
            #expect(falseConnected == 0)
        } catch {
            Issue.record("the whose-fault matrix could not run: \(error)\n\(daemon?.log ?? "")")
        }
        await observer?.stop()
        if let daemon {
            daemon.signal(SIGKILL)
            await daemon.waitForExit(timeout: .seconds(5))
        }
        await topology.tearDown()
    }

    private func faultCases(_ run: FaultRun) async {
        let topology = run.topology
        await run.quiet("all well for 10 s", hold: .seconds(10))
        await run.fault(
            "gateway silent (router A's LAN address removed)",
            fault: "gateway",
            bound: Self.gatewayBound,
            apply: { try await topology.setGatewaySilent(.a, true) },
            restore: { try await topology.setGatewaySilent(.a, false) }
        )
        await run.fault(
            "router A's upstream link down",
            fault: "upstream",
            bound: Self.upstreamBound,
            apply: { try await topology.setUpstream(.a, up: false) },
            restore: { try await topology.setUpstream(.a, up: true) }
        )
        let http = try? topology.http
        await run.fault(
            "server refused",
            fault: "server",
            reason: "connection_refused",
            bound: MatrixRun.answerBound,
            apply: { try await http?.set("close") },
            restore: { try await http?.set("open") }
        )
        await run.fault(
            "server answering 503",
            fault: "server",
            reason: "http_status",
            bound: MatrixRun.answerBound,
            apply: { try await http?.set("503") },
            restore: { try await http?.set("ok") }
        )
        await run.fault(
            "server blackholed, the upstream reference answering",
            fault: "server",
            reason: "timeout",
            bound: Self.upstreamBound,
            holdBeyond: Self.upstreamBound,
            apply: { try await topology.setServerBlackholed(true) },
            restore: { try await topology.setServerBlackholed(false) }
        )
        // The resolver's refusal reaches glibc, which gives up after its own attempt (resolv.conf's
        // 1 s): measured 6 s from the stop, with the stop itself.
        await run.fault(
            "DNS server stopped, a name target",
            fault: "dns",
            reason: "dns_failure",
            bound: Self.upstreamBound + .seconds(4),
            holdBeyond: Self.upstreamBound,
            apply: { try await topology.setDNS(running: false) },
            restore: { try await topology.setDNS(running: true) }
        )
        // Last: without ping sockets, the neighbour table alone (and a line in the log, once).
        await run.fault(
            "gateway silent, ping sockets not allowed (ping_group_range 1 0)",
            fault: "gateway",
            bound: Self.neighbourBound,
            evidenceIsLate: true,
            apply: {
                try await topology.setPingSockets(allowed: false)
                try await topology.setGatewaySilent(.a, true)
            },
            restore: {
                try await topology.setGatewaySilent(.a, false)
                try await topology.setPingSockets(allowed: true)
            }
        )
        if var row = run.cases.popLast() {
            if row.passed, !run.daemon.log.contains("ICMP echo to the gateway is not allowed") {
                row.failure = "reachd did not say it falls back to the neighbour table"
            }
            run.cases.append(row)
        }
    }
}

/// The whose-fault cases' record: the truth ledger, the verdicts, a row per case.
final class FaultRun {
    let topology: UplinkTopology
    let daemon: MatrixDaemon
    let observer: VerdictObserver
    var ledger = TruthLedger()
    var cases: [MatrixCase] = []

    init(topology: UplinkTopology, daemon: MatrixDaemon, observer: VerdictObserver) {
        self.topology = topology
        self.daemon = daemon
        self.observer = observer
        ledger.mark(.up, at: .now, bound: .zero, "start")
    }

    /// Applies a fault, expects `disconnected` with `fault` (and `reason`, when given) within
    /// `bound`, and the fault to hold `holdBeyond` more (a later round must not move it); restores
    /// and expects `connected` again. No fault is guessed on the way: every disconnected event
    /// before the one that tells says this fault or none (not known yet), unless `evidenceIsLate`
    /// (the neighbour table: the kernel's own timers tell a silent gateway up to a minute late).
    func fault(
        _ name: String,
        fault: String,
        reason: String? = nil,
        bound: Duration,
        holdBeyond: Duration = .milliseconds(300),
        evidenceIsLate: Bool = false,
        apply: () async throws -> Void,
        restore: () async throws -> Void
    ) async {
        var row = MatrixCase(
            group: "fault",
            name: name,
            expected: "disconnected, fault=\(fault)" + (reason.map { " (\($0))" } ?? "")
        )
        do {
            let applied = ContinuousClock.now
            // Any disconnection counts as detected for the ledger at once: the fault is checked below.
            ledger.mark(.down, at: applied, bound: bound, name)
            try await apply()
            let told = await observer.first(after: applied, timeout: bound) {
                $0.state == "disconnected" && $0.fault == fault && (reason == nil || $0.reason == reason)
            }
            if let told {
                row.detected = told.at - applied
                if let guessed = observer.faultsTold(from: applied, until: told.at).first(where: { $0.fault != fault }),
                    !evidenceIsLate
                {
                    row.failure = "said fault=\(guessed.faultAndReason) before \(fault)"
                }
                try await Task.sleep(for: holdBeyond)  // the fault held on: every event in this window is recorded, the check reads the last
                if let latest = observer.latest, latest.fault != fault || latest.state != "disconnected" {
                    row.failure =
                        "told \(fault) after \(MatrixCase.seconds(row.detected)), then \(latest.summary) fault=\(latest.fault ?? "nil")"
                }
            } else {
                let latest = observer.latest
                row.failure =
                    "at +\(MatrixCase.seconds(bound)) the verdict was \(latest?.summary ?? "none") fault=\(latest?.fault ?? "nil")"
            }
            let restoring = ContinuousClock.now
            ledger.mark(.unsettled, at: restoring, bound: .zero, "\(name): restoring")
            try await restore()
            ledger.mark(.up, at: .now, bound: MatrixRun.restoreAfterHangBound + MatrixRun.slack, "\(name): restored")
            if let back = await observer.first(
                after: restoring,
                timeout: .seconds(30),
                where: { $0.state == "connected" }
            ) {
                row.restored = back.at - restoring
            } else {
                row.failure =
                    row.failure ?? "not connected within 30 s of restoring: \(observer.latest?.summary ?? "none")"
            }
            if let back = observer.latest, back.state == "connected", back.fault != nil {
                row.failure = row.failure ?? "connected with fault \(back.fault!)"
            }
        } catch {
            row.failure = "the test could not act: \(error)"
        }
        finish(row)
    }

    /// All well for `hold`: connected throughout, and not one ICMP echo reaches the routers (the
    /// path evidence is gathered only while a target fails).
    func quiet(_ name: String, hold: Duration) async {
        var row = MatrixCase(group: "fault", name: name, expected: "connected, no echo to a gateway")
        let start = ContinuousClock.now
        let before = await echoRequests()
        try? await Task.sleep(for: hold)  // the quiet window measured: echo requests are counted across it
        let echoes = await echoRequests() - before
        row.expected = "connected, \(echoes) echo requests to the gateways"
        if let wrong = observer.all.first(where: { $0.at >= start && $0.state != "connected" }) {
            row.failure = "the verdict was \(wrong.summary)"
        }
        if echoes != 0 { row.failure = row.failure ?? "\(echoes) echo requests reached the routers while all was well" }
        finish(row)
    }

    /// Echo requests the routers have received (`IcmpMsg: InType8`, and `Icmp6: InEchos`).
    private func echoRequests() async -> Int {
        var total = 0
        for router in [topology.routerA, topology.routerB] {
            for file in ["/proc/net/snmp", "/proc/net/snmp6"] {
                guard let text = try? await router.run(["cat", file]).output else { continue }
                total +=
                    Self.counter(text, table: "IcmpMsg", name: "InType8")
                    + Self.counter(text, table: nil, name: "Icmp6InEchos")
            }
        }
        return total
    }

    /// A counter from `/proc/net/snmp` (a header line and a value line per table) or `snmp6` (name, value).
    static func counter(_ text: String, table: String?, name: String) -> Int {
        let lines = text.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        if let table {
            for (header, values) in zip(lines, lines.dropFirst())
            where header.first == "\(table):" && values.first == "\(table):" {
                if let index = header.firstIndex(of: Substring(name)), index < values.count {
                    return Int(values[index]) ?? 0
                }
            }
            return 0
        }
        return lines.first { $0.first == Substring(name) }.flatMap { $0.count > 1 ? Int($0[1]) : nil } ?? 0
    }

    func falseConnected() -> (seconds: Double, details: [TruthLedger.Disagreement]) {
        let found = ledger.disagreements(
            until: .now,
            verdict: { self.observer.verdict(at: $0) },
            changes: observer.all.map(\.at)
        )
        .filter { $0.truth == .down }
        return (found.map { MatrixCase.seconds($0.duration) }.reduce(0, +), found)
    }

    func finish(_ row: MatrixCase) {
        cases.append(row)
        print(
            "fault matrix: whose fault / \(row.name): \(row.failure.map { "FAIL \($0)" } ?? "ok") (detected \(MatrixCase.seconds(row.detected)), restored \(MatrixCase.seconds(row.restored)))"
        )
    }
}
