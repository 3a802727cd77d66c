import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// The embedded service and reachd side by side: one engine, so one answer. In the host namespace
/// of an ``UplinkTopology`` (two uplinks, routers, a server namespace with a real resolver), with
/// the same configuration, reachd (read on its unix socket) and `embedded-verdicts-helper` (the
/// program's `EmbeddedService`, writing its verdicts as reachd's event stream frames them) meet
/// each fault for real. Each case waits until both have settled on a fault, then requires the same
/// state, reason, fault, failing target, portal and uplinks from both, held for a probe interval.
/// Then, with a quality budget, a slow server: both impaired (latency) alike, with the same
/// budgets exceeded and where, each measuring the server's delay, the program told so by
/// `qualityChanges()`, and both good again.
///
/// The captive-portal cases run in the main matrix's network (``MatrixNetwork``), whose portal
/// server is built as real ones are: a login page and a redirect behind a check URL, and the
/// network's RFC 8908 API.
@Suite(
    "FaultMatrix: the embedded service says what reachd says",
    .serialized,
    .enabled(if: UplinkTopology.isAvailable, "needs root (network namespaces) and dnsmasq")
)
struct EmbeddedParityFaultMatrix {
    /// Long enough for the slowest case here, a silent gateway: the probe deadline, a round of
    /// evidence (the echo's second), hysteresis, and the observers' reading.
    static let settleBound = Duration.seconds(15)

    @Test(.timeLimit(.minutes(7)))
    func theEmbeddedServiceAndReachdTellEveryFaultAlike() async throws {
        let topology = try await UplinkTopology.make()
        let scratch = try TemporaryDirectory("parity")
        var sides: SideBySide?
        do {
            let started = try await SideBySide(
                configuration: """
                    probe:
                      per_interface: true
                    targets:
                      - name: server
                        url: \(UplinkTopology.serverURL)
                    """,
                namespace: topology.host,
                directory: scratch.path
            )
            sides = started
            let pair = started.pair
            var rows: [MatrixCase] = []
            func fault(
                _ name: String,
                until told: @escaping (ObservedVerdict) -> Bool = { _ in true },
                apply: () async throws -> Void,
                restore: () async throws -> Void
            ) async {
                rows.append(await pair.fault(name, until: told, apply: apply, restore: restore))
            }
            let http = try topology.http
            await fault("link down (both routers' links)") {
                try await topology.routerA.ip("link", "set", UplinkTopology.Uplink.a.routerLAN, "down")
                try await topology.routerB.ip("link", "set", UplinkTopology.Uplink.b.routerLAN, "down")
            } restore: {
                for uplink in UplinkTopology.Uplink.allCases {
                    try await topology.router(uplink).ip("link", "set", uplink.routerLAN, "up")
                    try await topology.setGatewaySilent(uplink, false)  // the addresses a link taken down loses
                }
            }
            await fault("server refused") {
                try await http.set("close")
            } restore: {
                try await http.set("open")
            }
            await fault("server blackholed") {
                try await topology.setServerBlackholed(true)
            } restore: {
                try await topology.setServerBlackholed(false)
            }
            await fault("gateway silent") {
                try await topology.setGatewaySilent(.a, true)
            } restore: {
                try await topology.setGatewaySilent(.a, false)
            }
            await fault("upstream dead") {
                try await topology.setUpstream(.a, up: false)
            } restore: {
                try await topology.setUpstream(.a, up: true)
            }
            await fault(
                "one uplink broken (router A's path to the server)",
                until: { $0.interfaces == "ua=false ub=true" }
            ) {
                try await topology.setServerPath(through: .a, broken: true)
            } restore: {
                try await topology.setServerPath(through: .a, broken: false)
            }
            for row in rows where !row.passed {
                Issue.record("\(row.name): \(row.failure ?? "")\n\(started.logs)")
            }
            await started.stop()

            // Quality (issue 38): the same budget on both, the server 400 ms late, over a 300 ms budget.
            sides = nil
            let judged = try await SideBySide(
                configuration: """
                    quality: { latency: 300ms, loss: 5%, window: \(Int(QualityFaultMatrix.window))s }
                    targets:
                      - name: server
                        url: \(UplinkTopology.serverURL)
                    """,
                namespace: topology.host,
                directory: scratch.path,
                starting: { $0.state == "connected" && $0.observedQuality?.state == "good" }
            )
            sides = judged
            let quality = await judged.pair.impairment(
                "server 400 ms late (latency budget 300 ms)",
                saying: "impaired fault=server target=server latency>0.3",
                measuring: 0.39...1.2
            ) {
                try await http.set("slow 0.4")
            } restore: {
                try await http.set("ok")
            }
            if let failure = quality.failure { Issue.record("\(quality.name): \(failure)\n\(judged.logs)") }
            rows.append(quality)
            print("\n" + MatrixCase.table(rows))
            print("fault matrix (embedded and reachd): \(rows.filter(\.passed).count)/\(rows.count) cases told alike")
        } catch {
            Issue.record("the side-by-side matrix could not run: \(error)\n\(sides?.logs ?? "")")
        }
        await sides?.stop()
        await topology.tearDown()
    }

    /// Portals built as real ones are (nftables DNAT to a portal web server, ``MatrixNetwork``),
    /// with a check URL: its login page answering 200 for every path, and a redirect.
    @Test(.timeLimit(.minutes(4)))
    func theEmbeddedServiceAndReachdTellEveryPortalAlike() async throws {
        let network = try await MatrixNetwork.make()
        let scratch = try TemporaryDirectory("parity-portal")
        var server: FaultServer?
        var portal: PortalServer?
        var portalAPI: CaptivePortalAPIServer?
        var sides: SideBySide?
        do {
            let started = try FaultServer(
                namespace: network.server,
                certificate: try await FaultServer.makeCertificate(in: scratch.path)
            )
            server = started
            let portalCertificate = try await FaultServer.makeCertificate(in: scratch.path, name: "portal")
            let portalServer = try PortalServer(namespace: network.server, certificate: portalCertificate)
            portal = portalServer
            try await portalServer.waitUntilReady()
            try await started.waitUntilReady()
            let target =
                "targets:\n  - name: server\n    url: http://\(MatrixNetwork.serverAddress):\(FaultServer.port)/health\n"
            let checkURL = try await SideBySide(
                configuration: target + "captive_portal:\n  check_url: \(PortalServer.checkURL)\n  expect_status: 204",
                namespace: network.host,
                directory: scratch.path
            )
            sides = checkURL
            var rows: [MatrixCase] = []
            for (flavour, evidence, signIn) in [
                ("login", "check_url", PortalServer.checkURL), ("redirect", "check_url", PortalServer.signInURL),
            ] {
                rows.append(
                    await checkURL.pair.fault(
                        "portal: \(flavour), check URL set",
                        until: { $0.portalEvidence == evidence && $0.portalURL == signIn },
                        apply: {
                            try await portalServer.set(flavour)
                            try await network.setPortal(true)
                        },
                        restore: { try await network.setPortal(false) }
                    )
                )
            }
            for row in rows where !row.passed { Issue.record("\(row.name): \(row.failure ?? "")\n\(checkURL.logs)") }
            await checkURL.stop()

            // The network's API (RFC 8908), on the portal's address and by its certificate's name,
            // captive from the start; signing in opens it. Asked at start, then every probe
            // interval while it says captive.
            let signInURL = "https://portal.test/login"
            let api = try await CaptivePortalAPIServer(
                certificate: portalCertificate,
                answer: #"{"captive": true, "user-portal-url": "\#(signInURL)"}"#,
                host: PortalServer.address,
                namespace: network.server
            )
            portalAPI = api
            var row = MatrixCase(
                group: "embedded",
                name: "portal: the network's API (RFC 8908)",
                expected: "captive_portal (rfc8908), then connected"
            )
            let told = { (verdict: ObservedVerdict) in
                verdict.portalEvidence == "rfc8908" && verdict.portalURL == signInURL
            }
            let throughAPI = try await SideBySide(
                configuration: target
                    + "captive_portal:\n  api_url: https://portal.test:\(api.port)/captive\n  ca_file: \(portalCertificate.certificate)",
                namespace: network.host,
                directory: scratch.path,
                starting: { $0.state == "disconnected" && $0.fault == "portal" && told($0) }
            )
            sides = throughAPI
            do {
                let signedIn = ContinuousClock.now
                try await api.answer(#"{"captive": false}"#)
                try await throughAPI.pair.settle("signed in: both connected") { $0.state == "connected" }
                row.restored = ContinuousClock.now - signedIn
            } catch {
                row.failure = "\(error)\n\(throughAPI.logs)"
            }
            rows.append(row)
            print("\n" + MatrixCase.table(rows))
            if let failure = row.failure { Issue.record("\(row.name): \(failure)") }
        } catch {
            Issue.record("the side-by-side portal matrix could not run: \(error)\n\(sides?.logs ?? "")")
        }
        await sides?.stop()
        await portalAPI?.stop()
        await portal?.stop()
        await server?.stop()
        await network.tearDown()
    }
}

/// reachd and the embedded service started in `namespace` on the same configuration, each
/// observed: reachd on its unix socket, the embedded service on its output.
private struct SideBySide {
    let reachd: ReachdProcess
    let pair: Pair
    private let embeddedLog: String

    /// - Parameter starting: What both must say before the first case (the same, and this).
    init(
        configuration: String,
        namespace: TestNamespace,
        directory: String,
        starting: @escaping (ObservedVerdict) -> Bool = { $0.state == "connected" }
    ) async throws {
        // A folder of its own: a killed reachd leaves its unix socket behind.
        let directory = "\(directory)/side-by-side-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = "\(directory)/reachd.yaml"
        try "socket: \(directory)/reachd.sock\n\(configuration)\n".write(
            toFile: file,
            atomically: true,
            encoding: .utf8
        )
        embeddedLog = "\(directory)/embedded.log"
        reachd = try ReachdProcess(
            ["--config", file],
            listen: nil,
            namespace: namespace,
            log: "\(directory)/reachd.log"
        )
        let helper = TestNamespace.command(
            [BuiltProducts.directory.appending(path: "embedded-verdicts-helper").path, file],
            in: namespace
        )
        let embedded = try VerdictObserver(
            executable: helper.executable,
            arguments: helper.arguments,
            errorLog: embeddedLog
        )
        do {
            try await waitUntil("reachd's unix socket", timeout: .seconds(20)) {
                FileManager.default.fileExists(atPath: "\(directory)/reachd.sock")
            }
            pair = Pair(reachd: try VerdictObserver(socket: "\(directory)/reachd.sock"), embedded: embedded)
            try await pair.settle("both say the same at start", starting)
        } catch {
            await embedded.stop()
            await reachd.kill()
            throw error
        }
    }

    /// Both logs' ends, for a failure.
    var logs: String {
        let embedded = (try? String(contentsOfFile: embeddedLog, encoding: .utf8)) ?? ""
        return "reachd's log:\n\(reachd.log.suffix(3000))\nthe embedded service's log:\n\(embedded.suffix(3000))"
    }

    func stop() async {
        await pair.reachd.stop()
        await pair.embedded.stop()
        await reachd.kill()
    }
}

/// reachd's verdicts and the embedded service's, compared.
private struct Pair {
    let reachd: VerdictObserver
    let embedded: VerdictObserver

    /// Waits until both latest verdicts satisfy `settled` and tell the same; throws with both when they do not.
    @discardableResult
    func settle(
        _ what: String,
        within bound: Duration = EmbeddedParityFaultMatrix.settleBound,
        _ settled: @escaping (ObservedVerdict) -> Bool
    ) async throws -> ObservedVerdict {
        let (reachd, embedded) = (self.reachd, self.embedded)
        do {
            return try await waitFor(what, timeout: bound) { () -> ObservedVerdict? in
                guard let mine = reachd.latest, let theirs = embedded.latest, settled(mine), settled(theirs),
                    mine.told == theirs.told
                else { return nil }
                return mine
            }
        } catch is TimedOutWaiting {
            throw ChildProcess.Failed(
                description:
                    "\(what): reachd said \(reachd.latest?.told ?? "nothing"), the embedded service \(embedded.latest?.told ?? "nothing")"
            )
        }
    }

    /// Applies a fault, waits until both say the same disconnected verdict with a fault (and what
    /// `until` asks besides), holds a probe interval and compares again; restores and waits until
    /// both are connected.
    func fault(
        _ name: String,
        until: @escaping (ObservedVerdict) -> Bool,
        apply: () async throws -> Void,
        restore: () async throws -> Void
    ) async -> MatrixCase {
        var row = MatrixCase(
            group: "embedded",
            name: name,
            expected: "the same disconnected verdict and fault from both"
        )
        do {
            let applied = ContinuousClock.now
            try await apply()
            let told = try await settle(name) { $0.state == "disconnected" && $0.fault != nil && until($0) }
            row.detected = ContinuousClock.now - applied
            row.expected = told.told
            // Held a probe interval: a later round moves neither the fault nor one side from the
            // other (the uplinks' own probes may still be coming in: both must follow them alike).
            try await Task.sleep(for: MatrixRun.interval)
            if let mine = reachd.latest, let theirs = embedded.latest,
                mine.fault != told.fault || theirs.fault != told.fault
            {
                row.failure = "after a probe interval reachd said \(mine.told), the embedded service \(theirs.told)"
            } else {
                try await settle("\(name), a probe interval on") { $0.fault == told.fault }
            }
            let restoring = ContinuousClock.now
            try await restore()
            try await settle("\(name): restored") { $0.state == "connected" }
            row.restored = ContinuousClock.now - restoring
        } catch {
            row.failure = "\(error)"
        }
        print(
            "fault matrix: embedded and reachd / \(name): \(row.failure.map { "FAIL \($0)" } ?? "alike: \(row.expected)")"
        )
        return row
    }

    /// Makes the line slow, waits until both say the same impaired quality (`expected`, the
    /// budgets it exceeds without the measured values: ``ObservedQuality/told``), each measuring a
    /// value in `reasonable`, and the program's `qualityChanges()` says it too; restores it and
    /// waits until both are good again, and the program is told so. The verdict stays connected
    /// throughout. The bounds are the quality matrix's: the window plus 3 evaluations to impair,
    /// plus 5 to clear.
    func impairment(
        _ name: String,
        saying expected: String,
        measuring reasonable: ClosedRange<Double>,
        apply: () async throws -> Void,
        restore: () async throws -> Void
    ) async -> MatrixCase {
        var row = MatrixCase(group: "embedded", name: name, expected: expected)
        let window = QualityFaultMatrix.window
        let (reachd, embedded) = (self.reachd, self.embedded)
        let start = ContinuousClock.now
        do {
            try await apply()
            let told = try await settle(name, within: QualityFaultMatrix.impairBound(window)) {
                $0.state == "connected" && $0.observedQuality?.told == expected
            }
            row.detected = ContinuousClock.now - start
            let measured = [reachd.latest, embedded.latest].map { $0?.observedQuality?.exceeded.map(\.value) ?? [] }
            row.expected = "\(told.observedQuality?.told ?? "-") (reachd \(measured[0]), embedded \(measured[1]))"
            if !measured.allSatisfy({ !$0.isEmpty && $0.allSatisfy(reasonable.contains) }) {
                row.failure = "measured \(measured), not within \(reasonable)"
            }
            try await waitUntil("\(name): the program is told", timeout: .seconds(5)) {
                embedded.qualityChanges.last??.told == expected
            }
            let restoring = ContinuousClock.now
            try await restore()
            try await settle("\(name): good again", within: QualityFaultMatrix.clearBound(window)) {
                $0.state == "connected" && $0.observedQuality?.state == "good"
            }
            row.restored = ContinuousClock.now - restoring
            try await waitUntil("\(name): the program is told it is good again", timeout: .seconds(5)) {
                embedded.qualityChanges.last??.state == "good"
            }
            let moved = (reachd.all + embedded.all).filter { $0.at >= start && $0.state != "connected" }
            if !moved.isEmpty {
                row.failure = (row.failure.map { "\($0); " } ?? "") + "the verdict moved: \(moved.map(\.told))"
            }
        } catch {
            row.failure = "\(error); the program was told \(embedded.qualityChanges.map { $0?.told ?? "none" })"
        }
        print(
            "fault matrix: embedded and reachd / \(name): \(row.failure.map { "FAIL \($0)" } ?? "alike: \(row.expected)")"
        )
        return row
    }
}
