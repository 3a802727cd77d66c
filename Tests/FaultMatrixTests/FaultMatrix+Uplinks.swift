import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// Each uplink on its own, and each address family, in the two-uplink topology (``UplinkTopology``):
/// reachd with `probe.per_interface: true` and an HTTP target by name (A and AAAA records).
///
/// - Router A's path to the server broken: uplink A's `reachable` goes false within the probe
///   bound, B's stays true, and the verdict follows the default route (via A: disconnected).
/// - The default route switched to B: the verdict follows (connected).
/// - IPv6 broken, IPv4 fine: connected throughout, `degraded_families` names `ipv6`.
///
/// Each case prints its detection time; "false-connected seconds" (the verdict `connected` while
/// the routes lead nowhere, beyond the case's bound) must be 0.
@Suite(
    "FaultMatrix: uplinks and families",
    .serialized,
    .enabled(if: UplinkTopology.isAvailable, "needs root (network namespaces) and dnsmasq")
)
struct UplinkFaultMatrix {
    /// The probe bound: the 1 s cadence, the 2 s deadline, no damping, and a little for the
    /// observer's polling.
    static let uplinkBound = Duration.seconds(4)
    /// A family is checked every tenth interval: 10 s, half a second for a tick passed over after
    /// an immediate probe, the 2 s deadline, and polling.
    static let familyBound = Duration.seconds(13)

    @Test(.timeLimit(.minutes(4)))
    func uplinksAndFamiliesAreToldApart() async throws {
        let topology = try await UplinkTopology.make()
        let scratch = try TemporaryDirectory("uplink-matrix")
        var reachd: ReachdProcess?
        var rows: [MatrixCase] = []
        var falseConnected = Duration.zero
        do {
            let daemon = try Self.start(in: topology, directory: scratch.path)
            reachd = daemon
            let status = StatusPoller(socket: "\(scratch.path)/reachd.sock")
            try await waitUntil("both uplinks reach the server", timeout: .seconds(20)) {
                let document = await status.read()
                return document?.state == "connected" && document?.reachable("ua") == true
                    && document?.reachable("ub") == true
            }

            // Router A's path to the server only: the routes still lead through A.
            var row = MatrixCase(
                group: "uplinks",
                name: "router A's path to the server broken",
                expected: "ua unreachable, ub reachable, disconnected (routes via A)"
            )
            let broke = ContinuousClock.now
            try await topology.setServerPath(through: .a, broken: true)
            let (uplinkDown, uplinkB, _) = try await status.watch(
                until: { $0.reachable("ua") == false },
                within: Self.uplinkBound * 2
            ) { document in
                document.reachable("ub") != false
            }
            row.detected = uplinkDown.map { $0 - broke }
            let disconnected = try await status.watch(
                until: { $0.state == "disconnected" },
                within: Self.uplinkBound * 2
            ) { _ in true }.found
            if let uplinkDown, uplinkDown - broke > Self.uplinkBound {
                row.failure = "uplink A told after \(MatrixCase.seconds(uplinkDown - broke))"
            }
            if uplinkDown == nil { row.failure = "uplink A still not unreachable" }
            if !uplinkB { row.failure = "uplink B was reported unreachable" }
            if disconnected == nil { row.failure = "the verdict did not follow the default route via A" }
            let stillDown = await status.read()
            if stillDown?.interface("ua")?["reason"] as? String == nil { row.failure = "uplink A has no reason" }
            print(
                "uplinks: uplink A unreachable after \(MatrixCase.seconds(row.detected)), verdict disconnected after \(MatrixCase.seconds(disconnected.map { $0 - broke }))"
            )
            if let disconnected, disconnected - broke > Self.uplinkBound {
                falseConnected += disconnected - broke - Self.uplinkBound
            }
            rows.append(row)

            // The default route to B: the verdict follows.
            row = MatrixCase(
                group: "uplinks",
                name: "default route switched to B",
                expected: "connected (routes via B), ua still unreachable"
            )
            let switched = ContinuousClock.now
            try await topology.setDefaultRoute(via: .b)
            let connected = try await status.watch(until: { $0.state == "connected" }, within: Self.uplinkBound * 2) {
                _ in true
            }.found
            row.detected = connected.map { $0 - switched }
            if connected == nil { row.failure = "the verdict did not follow the default route via B" }
            if let connected, connected - switched > Self.uplinkBound {
                row.failure = "connected only after \(MatrixCase.seconds(connected - switched))"
            }
            if await status.read()?.reachable("ua") != false { row.failure = "uplink A reads reachable" }
            rows.append(row)

            // Mended: back through A.
            row = MatrixCase(
                group: "uplinks",
                name: "router A's path mended, routes via A",
                expected: "ua reachable again, connected throughout"
            )
            try await topology.setDefaultRoute(via: .a)
            let mended = ContinuousClock.now
            try await topology.setServerPath(through: .a, broken: false)
            // Between the route switch and the mend the routes lead through the broken path: the
            // verdict may say disconnected then, never the reverse.
            let (uplinkUp, _, _) = try await status.watch(
                until: { $0.reachable("ua") == true },
                within: Self.uplinkBound * 2
            ) { _ in true }
            row.restored = uplinkUp.map { $0 - mended }
            if uplinkUp == nil { row.failure = "uplink A not reachable again" }
            try await waitUntil("connected via A", timeout: Self.uplinkBound * 2) {
                await status.read()?.state == "connected"
            }
            rows.append(row)

            // IPv6 broken, IPv4 fine: Happy Eyeballs answers over IPv4; the family check tells.
            row = MatrixCase(
                group: "families",
                name: "IPv6 broken, IPv4 fine",
                expected: "connected throughout, degraded_families [ipv6]"
            )
            let brokeSix = ContinuousClock.now
            try await topology.setIPv6Broken(true)
            let (degraded, stayedConnected, _) = try await status.watch(
                until: { $0.degradedFamilies == ["ipv6"] },
                within: Self.familyBound * 2
            ) { document in
                document.state == "connected"
            }
            row.detected = degraded.map { $0 - brokeSix }
            if degraded == nil { row.failure = "ipv6 never named degraded" }
            if let degraded, degraded - brokeSix > Self.familyBound {
                row.failure = "ipv6 named after \(MatrixCase.seconds(degraded - brokeSix))"
            }
            if !stayedConnected { row.failure = "the verdict left connected" }
            try await topology.setIPv6Broken(false)
            let mendedSix = ContinuousClock.now
            let (cleared, _, _) = try await status.watch(
                until: { $0.degradedFamilies.isEmpty },
                within: Self.familyBound * 2
            ) { _ in true }
            row.restored = cleared.map { $0 - mendedSix }
            if cleared == nil { row.failure = "ipv6 still degraded after it was mended" }
            rows.append(row)
        } catch {
            Issue.record("the uplink matrix could not run: \(error)")
        }
        reachd?.signal(SIGTERM)
        await reachd?.waitForExit(timeout: .seconds(5))
        if rows.contains(where: { !$0.passed }) || rows.isEmpty {
            let log =
                (FileManager.default.contents(atPath: "\(scratch.path)/reachd.log")).map {
                    String(decoding: $0, as: UTF8.self)
                } ?? ""
            print(log.split(separator: "\n").suffix(60).joined(separator: "\n"))
        }
        await topology.tearDown()
        print("\n" + MatrixCase.table(rows))
        print(
            String(
                format: "uplink matrix: %d/%d cases passed, false-connected seconds = %.2f",
                rows.filter(\.passed).count,
                rows.count,
                MatrixCase.seconds(falseConnected)
            )
        )
        for row in rows where !row.passed { Issue.record("\(row.group) / \(row.name): \(row.failure ?? "")") }
        #expect(falseConnected == .zero)
    }

    /// reachd in the topology's host namespace, its API on a unix socket the test reaches from outside.
    private static func start(in topology: UplinkTopology, directory: String) throws -> ReachdProcess {
        let configuration = """
            socket: \(directory)/reachd.sock
            listen: 127.0.0.1:0
            probe:
              per_interface: true
            targets:
              - name: server
                url: \(UplinkTopology.serverURL)
            """
        return try ReachdProcess(
            configuration: configuration,
            in: directory,
            listen: nil,
            namespace: topology.host,
            log: "\(directory)/reachd.log"
        )
    }
}

/// The status document, read with curl on reachd's unix socket, as a dictionary.
private struct StatusPoller: Sendable {
    let socket: String

    struct Document: @unchecked Sendable {
        let object: [String: Any]
        var state: String? { object["state"] as? String }
        var degradedFamilies: [String] { object["degraded_families"] as? [String] ?? [] }
        func interface(_ name: String) -> [String: Any]? {
            (object["interfaces"] as? [[String: Any]])?.first { $0["name"] as? String == name }
        }
        func reachable(_ name: String) -> Bool? { interface(name)?["reachable"] as? Bool }
    }

    func read() async -> Document? {
        guard
            let result = try? await runProgram(
                "/usr/bin/curl",
                ["-s", "-m", "1", "--unix-socket", socket, "http://localhost/v1/status"]
            ),
            result.status == 0,
            let object = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        else { return nil }
        return Document(object: object)
    }

    /// Reads every 50 ms until `condition` holds or `limit` passes; says when it held (nil: never),
    /// whether `invariant` held at every read before, and the last document.
    func watch(
        until condition: (Document) -> Bool,
        within limit: Duration,
        invariant: (Document) -> Bool
    ) async throws -> (found: ContinuousClock.Instant?, invariantHeld: Bool, last: Document?) {
        var held = true
        var last: Document?
        // Each look runs curl: every 50 ms, not every millisecond.
        let found = try? await waitFor("the status document to match", timeout: limit, every: .milliseconds(50)) {
            () -> ContinuousClock.Instant? in
            guard let document = await read() else { return nil }
            last = document
            if condition(document) { return .now }
            held = held && invariant(document)
            return nil
        }
        return (found, held, last)
    }
}
