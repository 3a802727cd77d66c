import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// The whole daemon under the faults a host meets: real reachd processes, a real HTTP server and
/// a veth link in network namespaces of the matrix's own. An observer lays what the test did (the
/// truth) beside what reachd published on `/v1/events` and counts the seconds they disagreed
/// beyond each fault's detection bound.
///
/// It runs alone (`swift test --filter FaultMatrix`, after the parallel suite in `scripts/test`) so
/// that its timings are not those of a machine busy with every other test.
@Suite(
    "FaultMatrix",
    .serialized,
    .enabled(if: TestNamespace.isAvailable, Comment(rawValue: TestNamespace.unavailableReason))
)
struct FaultMatrix {
    @Test(.timeLimit(.minutes(6)))
    func everyFaultGetsATrueVerdictInTime() async throws {
        guard await GRPCFaultServer.isAvailable() else {
            Issue.record(
                "needs grpcio: python3 -m pip install grpcio grpcio-health-checking (scripts/test installs it)"
            )
            return
        }
        let began = ContinuousClock.now
        let scratch = try TemporaryDirectory("fault-matrix")
        let directory = scratch.path
        let network = try await MatrixNetwork.make()
        let bus = try await PrivateSystemBus.start()
        var server: FaultServer?
        var portal: PortalServer?
        var run: MatrixRun?
        do {
            let logind = try await bus.startLogind()
            let certificate = try await FaultServer.makeCertificate(in: directory)
            let started = try FaultServer(namespace: network.server, certificate: certificate)
            server = started
            let grpc = try GRPCFaultServer(namespace: network.server)
            let portalServer = try PortalServer(
                namespace: network.server,
                certificate: try await FaultServer.makeCertificate(in: directory, name: "portal")
            )
            portal = portalServer
            try await portalServer.waitUntilReady()
            try await started.waitUntilReady()
            try await grpc.waitUntilReady()
            let matrix = try await MatrixRun(
                network: network,
                bus: bus,
                logind: logind,
                server: started,
                grpc: grpc,
                directory: directory
            )
            run = matrix
            await linkCases(matrix)
            await netlinkOverrun(matrix)
            await forgedNetlink(matrix)
            await grpcCases(matrix)
            let crowd = await crowdArrives(matrix)
            await serverCases(matrix)
            await portalCases(matrix, portal: portalServer)
            await journalLines(matrix, directory: directory)
            await systemSleep(matrix)
            await clockJumps(matrix)
            await badRequests(matrix)
            await crowdLeaves(matrix, crowd)
            let (falseConnected, falseDisconnected, details) = matrix.accounting()
            for stretch in details {
                Issue.record(
                    "\(stretch.label): from +\(MatrixCase.seconds(stretch.at - began)) for \(MatrixCase.seconds(stretch.duration)) the verdict was \(stretch.verdict) while the truth was \(stretch.truth)"
                )
            }
            let lost = matrix.observer.sequenceGaps() - matrix.announcedGaps + matrix.hookMismatches
            await daemonCases(matrix)
            await badInputCases(matrix, directory: directory)

            let passed = matrix.cases.filter(\.passed).count
            print("\n" + MatrixCase.table(matrix.cases))
            let wall = MatrixCase.seconds(ContinuousClock.now - began)
            print(
                String(
                    format:
                        "fault matrix: %d/%d cases passed, false-connected seconds = %.2f, false-disconnected seconds beyond one probe interval = %.2f, transitions lost = %d, peak RSS %.1f MiB (matrix wall time %.0f s)",
                    passed,
                    matrix.cases.count,
                    falseConnected,
                    falseDisconnected,
                    lost,
                    Double(matrix.peakResidentKiB) / 1024,
                    wall
                )
            )
            for row in matrix.cases where !row.passed {
                Issue.record("\(row.group) / \(row.name): \(row.failure ?? "")")
            }
            #expect(falseConnected == 0)
            #expect(falseDisconnected == 0)
            #expect(lost == 0)
        } catch {
            Issue.record("the matrix could not run: \(error)\n\(run?.daemon.log ?? "")")
        }
        await run?.observer.stop()
        if let daemon = run?.daemon {
            daemon.signal(SIGKILL)
            await daemon.waitForExit(timeout: .seconds(5))
        }
        await server?.stop()
        await portal?.stop()
        await run?.grpc.kill()
        await run?.logind.stop()
        await bus.stop()
        await network.tearDown()
    }

    // MARK: Link

    private func linkCases(_ run: MatrixRun) async {
        let network = run.network
        let (host, server) = (network.host, network.server)
        await run.fault(
            "link",
            "interface down/up",
            reason: "no_link",
            bound: MatrixRun.linkBound,
            apply: { try await host.ip("link", "set", "m0", "down") },
            restore: { try await network.restoreLink() }
        )
        await run.fault(
            "link",
            "carrier lost on the peer",
            reason: "no_link",
            bound: MatrixRun.carrierBound,
            restoreBound: MatrixRun.restoreCarrierBound,
            apply: { try await server.ip("link", "set", "m1", "down") },
            restore: { try await network.restoreLink() }
        )
        await run.fault(
            "link",
            "default route removed",
            reason: "no_route",
            bound: MatrixRun.linkBound,
            apply: { try await host.ip("route", "del", "default") },
            restore: { try await network.restoreLink() }
        )
        await run.fault(
            "link",
            "address removed",
            reason: "no_address",
            bound: MatrixRun.linkBound,
            apply: { try await host.ip("addr", "del", "\(MatrixNetwork.hostAddress)/32", "dev", "m0") },
            restore: { try await network.restoreLink() }
        )
        await run.fault(
            "link",
            "interface deleted and recreated",
            reason: "no_link",
            bound: MatrixRun.linkBound,
            restoreBound: MatrixRun.restoreCarrierBound,
            apply: { try await host.ip("link", "del", "m0") },
            restore: { try await network.createLink() }
        )
        await run.storm("link", "1,000-flap storm", bound: MatrixRun.restoreBound) {
            try await host.ipBatch((0..<1_000).flatMap { _ in ["link set m0 down", "link set m0 up"] })
            try await network.restoreLink()
        }
    }

    /// Forged link-down messages and random bytes from a process, straight to reachd's netlink socket.
    private func forgedNetlink(_ run: MatrixRun) async {
        var sockets = 0
        await run.steady("link", "forged and random netlink datagrams from a process", hold: .seconds(1)) {
            sockets = try await NetlinkForger.send(to: run.daemon, count: 500)
        } restore: {
        }
        guard var row = run.cases.popLast() else { return }
        row.expected = "connected throughout, \(sockets) socket(s) sent 1,000 datagrams, dropped"
        if row.passed, sockets == 0 { row.failure = "no netlink socket of reachd found" }
        if row.passed, !run.daemon.log.contains("Dropped a netlink datagram not sent by the kernel") {
            row.failure = "reachd did not log the drop"
        }
        run.cases.append(row)
    }

    // MARK: gRPC (watched)

    private func grpcCases(_ run: MatrixRun) async {
        // The link cases above flapped the link under an open watch: what the server pushes now
        // must count (the stream was reopened in the new epoch), within a second, long before the
        // 10 s poll.
        await run.fault(
            "grpc",
            "NOT_SERVING pushed after link flaps",
            reason: "not_serving",
            bound: MatrixRun.linkBound,
            apply: { try await run.grpc.set("not_serving") },
            restore: { try await run.grpc.set("serving") }
        )
        await run.fault(
            "grpc",
            "server killed under watch",
            reason: "connection_refused",
            bound: MatrixRun.linkBound,
            apply: { await run.grpc.kill() },
            restore: {
                run.grpc = try GRPCFaultServer(namespace: run.network.server)
                try await run.grpc.waitUntilReady()
            }
        )
    }

    // MARK: Server

    private func serverCases(_ run: MatrixRun) async {
        let server = run.server
        let network = run.network
        let ok = { try await server.set("ok") }
        await run.fault(
            "server",
            "503",
            reason: "http_status",
            bound: MatrixRun.answerBound,
            apply: { try await server.set("503") },
            restore: ok
        )
        await run.fault(
            "server",
            "refused",
            reason: "connection_refused",
            bound: MatrixRun.answerBound,
            apply: { try await server.set("close") },
            restore: { try await server.set("open") }
        )
        await run.fault(
            "server",
            "garbage",
            reason: "protocol_error",
            bound: MatrixRun.answerBound,
            apply: { try await server.set("garbage") },
            restore: ok
        )
        await run.fault(
            "server",
            "DNS failure",
            reason: "dns_failure",
            bound: MatrixRun.answerBound,
            apply: { try network.setServerNameResolves(false) },
            restore: { try network.setServerNameResolves(true) }
        )
        await run.fault(
            "server",
            "blackhole",
            reason: "timeout",
            bound: MatrixRun.silenceBound,
            restoreBound: MatrixRun.restoreAfterHangBound,
            apply: { try await network.setBlackhole(true) },
            restore: { try await network.setBlackhole(false) }
        )
        await run.steady(
            "server",
            "slow, 1.5 s (under the 2 s deadline)",
            hold: .seconds(4),
            apply: { try await server.set("slow 1.5") },
            restore: ok
        )
        await run.fault(
            "server",
            "slow, 2.5 s (over the 2 s deadline)",
            reason: "timeout",
            bound: MatrixRun.silenceBound,
            restoreBound: MatrixRun.restoreAfterHangBound,
            apply: { try await server.set("slow 2.5") },
            restore: ok
        )
        await run.fault(
            "server",
            "head, then a stalled body",
            reason: "timeout",
            bound: MatrixRun.silenceBound,
            restoreBound: MatrixRun.restoreAfterHangBound,
            apply: { try await server.set("stall") },
            restore: ok
        )
        await run.steady(
            "server",
            "healthy on IPv4 only; its name has an AAAA record too (refused)",
            hold: .seconds(4),
            apply: { try await network.setIPv6(silent: false) },
            restore: { try await network.setIPv6(silent: nil) }
        )
        await run.steady(
            "server",
            "healthy on IPv4 only; its AAAA address is silent",
            hold: .seconds(4),
            apply: { try await network.setIPv6(silent: true) },
            restore: { try await network.setIPv6(silent: nil) }
        )
        await run.storm("server", "restarting every 500 ms for 5 s", bound: MatrixRun.restoreBound) {
            try await server.set("restarting 5")
        }
    }

    // MARK: Subscribers

    /// What the server cases are compared with: the never-reading client, and reachd's memory
    /// once the crowds had gone.
    struct CrowdState {
        var crowd: SubscriberCrowd?
        /// The highest resident size the crowds left in reachd's arenas (`VmHWM`).
        var peakResidentKiB: Int
    }

    /// 1,000 event-stream clients come and go, three times: the first round is the warm-up (the
    /// allocator keeps what it grew to), and a leak is growth that does not stop, so the case fails
    /// only when each of the next two rounds grew reachd more. Each size is read once reachd has
    /// given the round's heap back (`reachd_heap_trims_total`): a size read as soon as the
    /// subscriptions ended fell before or after that trim as the machine's load had it, 20-25 MiB
    /// apart. Then one client that never reads stays for the server cases.
    private func crowdArrives(_ run: MatrixRun) async -> CrowdState {
        var row = MatrixCase(
            group: "subscribers",
            name: "1,000 SSE clients come and go, three times",
            expected: "subscribers and memory back"
        )
        let started = run.daemon.residentKiB
        let baseline = await run.daemon.subscribers() ?? -1
        var state = CrowdState(crowd: nil, peakResidentKiB: 0)
        do {
            var sizes: [Int] = []
            for _ in 1...3 {
                let crowd = try SubscriberCrowd(socket: run.daemon.socketPath, crowd: 1_000)
                let began = ContinuousClock.now
                try await crowd.waitUntilCrowdIsGone()
                row.detected = ContinuousClock.now - began
                await crowd.stop()
                // reachd notices a client gone when it next writes to it: some at once, the rest at
                // their heartbeat (15 s), each wave trimmed 2 s after its last. One more client that
                // leaves after them all is followed by a trim after them all.
                try await waitUntil("the crowd's subscriptions end", timeout: .seconds(30)) {
                    await run.daemon.subscribers() ?? -1 <= baseline
                }
                let trims = await run.daemon.metric("reachd_heap_trims_total") ?? 0
                try await SubscriberCrowd.hangUp(socket: run.daemon.socketPath)
                try await waitUntil("reachd gives the heap back", timeout: .seconds(30), every: .milliseconds(100)) {
                    await run.daemon.metric("reachd_heap_trims_total") ?? 0 > trims
                }
                sizes.append(run.daemon.residentKiB)
            }
            state.peakResidentKiB = run.daemon.peakResidentKiB
            let growth = zip(sizes.dropFirst(), sizes).map { $0 - $1 }
            row.expected =
                "subscribers back to \(baseline); RSS \(started / 1024) MiB, after each round "
                + sizes.map { "\($0 / 1024)" }.joined(separator: ", ") + " MiB"
            // A leak of 8 KiB a client (a fifth of what a connected one costs) is 8 MiB a round;
            // the sizes after a trim wander by a MiB or two.
            if growth.allSatisfy({ $0 > 8 * 1024 }) {
                row.failure = "each round grew RSS more: " + growth.map { "+\($0 / 1024) MiB" }.joined(separator: ", ")
            }
            state.crowd = try SubscriberCrowd(socket: run.daemon.socketPath, crowd: 0, withOneThatNeverReads: true)
        } catch {
            row.failure = "\(error) (reachd_subscribers \(await run.daemon.subscribers() ?? -1), expected \(baseline))"
        }
        run.finish(row)
        return state
    }

    /// The client that never read held on through every server case: reachd kept publishing to
    /// everyone else without a gap (the headline's transitions lost) and without growing past
    /// what the crowds had taken (the allocator may fill again what it gave back).
    private func crowdLeaves(_ run: MatrixRun, _ state: CrowdState) async {
        var row = MatrixCase(
            group: "subscribers",
            name: "an SSE client that never reads",
            expected: "others lose nothing, memory bounded"
        )
        let grown = run.daemon.residentKiB - state.peakResidentKiB
        row.expected = "others lose nothing; RSS \(grown / 1024) MiB from the crowds' peak after the server cases"
        if grown > 8 * 1024 { row.failure = "RSS grew \(grown / 1024) MiB past the crowds' peak while it did not read" }
        await state.crowd?.stop()
        run.finish(row)
    }

    // MARK: reachd itself

    private func daemonCases(_ run: MatrixRun) async {
        // A target added by reload whose server's certificate is for another name.
        let path = run.daemon.configPath
        let original = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        let withTLS = run.daemon.configuration(original, addingTLSTarget: nil)
        await run.fault(
            "server",
            "TLS name mismatch (target added by reload)",
            reason: "tls_failure",
            bound: MatrixRun.answerBound,
            apply: {
                try withTLS.write(toFile: path, atomically: true, encoding: .utf8)
                run.daemon.signal(SIGHUP)
            },
            restore: {
                try original.write(toFile: path, atomically: true, encoding: .utf8)
                run.daemon.signal(SIGHUP)
            }
        )

        // SIGHUP with a configuration that does not parse: rejected, the old one stays, nothing published.
        var hup = MatrixCase(
            group: "reachd",
            name: "SIGHUP with a bad config",
            expected: "reload_rejected, verdict unchanged"
        )
        do {
            let good = try String(contentsOfFile: run.daemon.configPath, encoding: .utf8)
            try (good + "\nprobe:\n  interval: soon\n").write(
                toFile: run.daemon.configPath,
                atomically: true,
                encoding: .utf8
            )
            let before = run.observer.all.count
            run.daemon.signal(SIGHUP)
            try await run.daemon.waitForLog("reload_rejected", timeout: .seconds(10))
            try await run.waitForAProbeLater()
            if !run.daemon.isRunning { hup.failure = "reachd exited" }
            if run.observer.all.count != before {
                hup.failure = "the verdict moved: \(run.observer.latest?.summary ?? "")"
            }
            if !run.daemon.log.contains("probe.interval") { hup.failure = "the rejection does not name probe.interval" }
            try good.write(toFile: run.daemon.configPath, atomically: true, encoding: .utf8)
        } catch {
            hup.failure = "\(error)"
        }
        run.finish(hup)

        // SIGKILL and a restart: a subscriber resuming from the last id it saw gets `reset`, never silence.
        var restart = MatrixCase(
            group: "reachd",
            name: "SIGKILL, restart, resuming client",
            expected: "reset, then connected"
        )
        do {
            let last = run.observer.latest?.sequence ?? 0
            run.daemon.signal(SIGKILL)
            await run.daemon.waitForExit()
            await run.observer.stop()
            let restarting = ContinuousClock.now
            _ = try await run.restartDaemon()
            try await waitUntil("the new socket answers", timeout: .seconds(20)) {
                (try? await runProgram(
                    "/usr/bin/curl",
                    ["-sf", "--unix-socket", run.daemon.socketPath, "http://localhost/healthz"]
                ))?.status == 0
            }
            run.observer = try VerdictObserver(socket: run.daemon.socketPath, lastEventID: last)
            if let first = await run.observer.first(after: restarting, timeout: .seconds(10), where: { _ in true }) {
                if !first.reset {
                    restart.failure = "the first event after the restart was \(first.summary) without reset"
                }
            } else {
                restart.failure = "silence: no event within 10 s of resuming"
            }
            if let back = await run.observer.first(
                after: restarting,
                timeout: .seconds(20),
                where: { $0.state == "connected" }
            ) {
                restart.restored = back.at - restarting
            } else {
                restart.failure =
                    restart.failure ?? "never connected after the restart: \(run.observer.latest?.summary ?? "none")"
            }
        } catch {
            restart.failure = "\(error)"
        }
        run.finish(restart)

        // SIGTERM while a probe is in flight: a clean exit within a second, and no disconnection published.
        var term = MatrixCase(group: "reachd", name: "SIGTERM mid-probe", expected: "exit 0 in < 1 s, no false loss")
        do {
            try await run.server.set("slow 1.5")
            try await Task.sleep(for: .milliseconds(1_200))  // into the 1.5 s answer: a probe is in flight when SIGTERM comes
            let signalled = ContinuousClock.now
            run.daemon.signal(SIGTERM)
            let took = await run.daemon.waitForExit(timeout: .seconds(5))
            term.detected = took
            if took >= .seconds(1) { term.failure = "took \(MatrixCase.seconds(took)) to exit" }
            if run.daemon.terminationStatus != 0 { term.failure = "exit status \(run.daemon.terminationStatus)" }
            if let lie = run.observer.all.first(where: { $0.at >= signalled && $0.state != "connected" }) {
                term.failure = "published \(lie.summary) while stopping"
            }
            try await run.server.set("ok")
        } catch {
            term.failure = "\(error)"
        }
        run.finish(term)
    }

    // MARK: Bad input

    private func badInputCases(_ run: MatrixRun, directory: String) async {
        let target = "targets:\n  - name: a\n    url: http://h/\n"
        let configurations: [(name: String, yaml: String, names: String)] = [
            ("unknown key", target + "probe:\n  intervall: 1s\n", "probe.intervall"),
            ("not a duration", target + "probe:\n  interval: soon\n", "probe.interval"),
            ("unsupported URL", "targets:\n  - name: a\n    url: ftp://h/\n", "targets[0].url"),
            ("unknown policy", target + "policy: most\n", "policy"),
            (
                "duplicate target name", target + "  - name: a\n    url: http://g/\n",
                "targets: duplicate target name \"a\""
            ),
            (
                "unreadable token file", "server:\n  base_url: http://h/\n  bearer_token_file: /nonexistent/token\n",
                "server.bearer_token_file"
            ),
            ("not YAML", "targets: [\n", "reachd.yaml"),
            ("oversized file (1 MiB + 1)", String(repeating: "#", count: (1 << 20) + 1), "larger than 1 MiB"),
        ]
        for (index, configuration) in configurations.enumerated() {
            var row = MatrixCase(
                group: "bad input",
                name: configuration.name,
                expected: "exit 78 naming \(configuration.names)"
            )
            do {
                let path = "\(directory)/bad-\(index)/reachd.yaml"
                try FileManager.default.createDirectory(
                    atPath: "\(directory)/bad-\(index)",
                    withIntermediateDirectories: true
                )
                try configuration.yaml.write(toFile: path, atomically: true, encoding: .utf8)
                let reachd = try ReachdProcess(["--config", path], log: "\(directory)/bad-\(index)/stderr")
                let result = await reachd.finish()
                let errors = result.errors
                if result.status != 78 {
                    row.failure = "exit \(result.status): \(errors.prefix(300))"
                } else if !errors.contains(configuration.names) {
                    row.failure = "exit 78 but does not name \(configuration.names): \(errors.prefix(300))"
                }
            } catch {
                row.failure = "\(error)"
            }
            run.finish(row)
        }
    }
}
