import Foundation
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

/// reachd's GIO module (`gio-module/`) in GLib programs on loopback: what a program hears while
/// reachd restarts and when it is gone, what a reachd that does not answer costs a program's
/// start, and the module under valgrind through garbage. The faults themselves, the desktop
/// portal and `can_reach()` are in ``GIOModuleFaultMatrix``.
@Suite(
    "reachd's GIO network monitor in GLib programs",
    .enabled(if: GLibMonitorProgram.isAvailable, Comment(rawValue: GLibMonitorProgram.unavailableReason))
)
struct GIOModuleTests {
    typealias Connectivity = GLibMonitorProgram.Connectivity

    static func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
    static func seconds(_ duration: Duration) -> String { String(format: "%.2f s", duration.seconds) }

    /// The module's hold (`HOLD_SECONDS` in reachd-network-monitor.c): how long reachd's last
    /// verdict stands while reachd is away.
    static let hold = Duration.seconds(10)

    @Test(.timeLimit(.minutes(2)))
    func aProgramRidesOutReachdsRestartAndWithoutReachdGLibPicksItsOwnBackend() async throws {
        let directory = try TemporaryDirectory("gio-restart")
        let health = try await HealthServer()
        let socket = "\(directory.path)/reachd.sock"
        let reachd = try ReachdProcess(
            configuration: """
                socket: \(socket)
                server: { base_url: "http://127.0.0.1:\(health.port)" }
                probe: { interval: 200ms }
                """,
            in: directory.path
        )
        let port = try await reachd.waitForPort()
        try await reachd.waitForState("connected", port: port)
        let program = try await GLibMonitorProgram(endpoint: socket)
        let (backend, initSeconds) = try await program.start()
        #expect(backend.type == GLibMonitorProgram.moduleType, "\(program.report)")
        #expect(backend.connectivity == Connectivity.full.rawValue)
        #expect(initSeconds < 1, "get_default() took \(initSeconds) s")
        let reached = try await program.reach("127.0.0.1", health.port)
        #expect(reached.reachable == true, "\(reached)")

        // The server stops: limited, as reachd says.
        var mark = program.mark
        await health.stop()
        try await program.waitForChange(to: .limited, after: mark)

        // reachd dies. A program starting now gets GLib's own backend at once, and the running
        // one keeps reachd's last verdict for the hold, then says what that backend says.
        mark = program.mark
        let killed = ContinuousClock.now
        await reachd.kill()
        let fresh = try await GLibMonitorProgram(endpoint: socket)
        let (netlink, freshInitSeconds) = try await fresh.start()
        #expect(netlink.type == GLibMonitorProgram.netlinkType, "\(fresh.report)")
        #expect(freshInitSeconds < 0.5, "with reachd gone, get_default() took \(freshInitSeconds) s")
        print(
            "GIO module: get_default() took \(Self.milliseconds(initSeconds)) with reachd, \(Self.milliseconds(freshInitSeconds)) without (netlink)"
        )
        _ = await fresh.finish()
        let kernelView = try #require(Connectivity(rawValue: netlink.connectivity ?? 0))
        try await program.waitForChange(
            to: kernelView,
            available: netlink.available,
            after: mark,
            timeout: .seconds(20)
        )
        let held = ContinuousClock.now - killed
        print(
            "GIO module: reachd's verdict held \(Self.seconds(held)) after it died, then the kernel's view (\(netlink.state))"
        )
        #expect(held >= Self.hold - .milliseconds(500) && held < Self.hold + .seconds(3), "held \(held)")

        // reachd comes back (the server still down): the program follows it again, with the
        // backoff capped at 5 s.
        mark = program.mark
        let again = try ReachdProcess(["--config", try #require(reachd.configurationPath)])
        let restarted = ContinuousClock.now
        try await program.waitForChange(to: .limited, after: mark, timeout: .seconds(15))
        print(
            "GIO module: reachd's verdict again \(Self.seconds(ContinuousClock.now - restarted)) after its restart"
        )
        mark = program.mark
        let healthAgain = try await HealthServer(port: health.port)
        try await program.waitForChange(to: .full, available: true, after: mark)

        let result = await program.finish()
        #expect(result.status == 0, "\(program.report)")
        await again.kill()
        await healthAgain.stop()
    }

    @Test(.timeLimit(.minutes(1)))
    func aReachdThatDoesNotAnswerHoldsAProgramsStartOneSecondAtMost() async throws {
        let silent = SilentTCPListener()
        let program = try await GLibMonitorProgram(endpoint: "http://127.0.0.1:\(silent.port)")
        let (backend, initSeconds) = try await program.start()
        #expect(backend.type == GLibMonitorProgram.netlinkType, "\(program.report)")
        #expect(initSeconds >= 0.95 && initSeconds < 2, "get_default() took \(initSeconds) s")
        print("GIO module: get_default() took \(Self.milliseconds(initSeconds)) against a reachd that never answers")
        #expect(silent.hasPendingConnection, "the module did connect")
        _ = await program.finish()

        let https = try await GLibMonitorProgram(endpoint: "https://127.0.0.1:9780")
        let (other, otherSeconds) = try await https.start()
        #expect(other.type == GLibMonitorProgram.netlinkType)
        #expect(otherSeconds < 0.5)
        _ = await https.finish()
    }

    /// The module in C under valgrind (memcheck), in the module's own GLib program
    /// (`monitor-watch`), against a stand-in for reachd that sends 200 verdicts, then breaks the
    /// chunked framing, sends truncated and random events and a 2 MiB line, refuses with 401,
    /// sends garbage instead of HTTP, and finally a good verdict again. The program must follow
    /// every verdict, survive the rest, hear the last one, and exit with no memory error and no
    /// definite leak.
    @Test(.timeLimit(.minutes(3)))
    func garbageFromAStandInNeitherCrashesNorCorruptsTheModuleUnderValgrind() async throws {
        try await GLibMonitorProgram.buildModule()
        let directory = try TemporaryDirectory("gio-valgrind")
        let socket = "\(directory.path)/standin.sock"
        let standIn = try ChildProcess(
            "reachd stand-in",
            executable: "/usr/bin/python3",
            arguments: ["-u", "-c", Self.garbageStandIn, socket]
        )
        defer { standIn.signal(SIGKILL) }
        do {
            try await standIn.waitForLine { $0 == "ready" }
        } catch {
            throw ChildProcess.Failed(description: "\(error)\n\(standIn.errors)")
        }
        let valgrindLog = "\(directory.path)/valgrind.log"
        let program = try await GLibMonitorProgram(
            endpoint: socket,
            command: [
                "/usr/bin/valgrind", "--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite",
                "--show-leak-kinds=definite", "--suppressions=/usr/share/glib-2.0/valgrind/glib.supp", "--vgdb=no",
                "--log-file=\(valgrindLog)", "\(GLibMonitorProgram.moduleDirectory)/monitor-watch",
            ],
            environment: ["G_SLICE": "always-malloc", "G_DEBUG": "gc-friendly"]
        )
        let (backend, _) = try await program.start(timeout: .seconds(60))
        #expect(backend.type == GLibMonitorProgram.moduleType, "\(program.report)")
        try standIn.writeLine("go")
        try await standIn.waitForLine(timeout: .seconds(60)) { $0 == "served 5" }
        try await program.waitForChange(to: .portal, after: 0, timeout: .seconds(30))
        // The first verdict is the state at start; each of the 199 after it a change, in order
        // (limited, portal, local, full, ...); then the portal of the last connection.
        let changes = program.seen.filter { $0.event == "changed" }.compactMap(\.connectivity)
        let cycle = [Connectivity.full, .limited, .portal, .local].map(\.rawValue)
        #expect(Array(changes.prefix(199)) == (1..<200).map { cycle[$0 % 4] }, "\(changes)")
        #expect(changes.dropFirst(199).first == Connectivity.portal.rawValue, "\(changes)")
        let result = await program.finish(timeout: .seconds(60))
        let log = (try? String(contentsOfFile: valgrindLog, encoding: .utf8)) ?? ""
        #expect(result.status == 0, "valgrind's status \(result.status):\n\(log)")
        #expect(log.contains("ERROR SUMMARY: 0 errors"), "\(log)")
        print(
            "GIO module under valgrind: \(changes.count) signals through 5 connections of which 4 were garbage; \(log.split(separator: "\n").last { $0.contains("ERROR SUMMARY") } ?? "")"
        )
    }

    /// A stand-in for reachd on a unix socket, one connection after another; prints `served N`
    /// after each. The verdicts of the first cycle through connected, limited, portal and local
    /// (ending at local); the last connection's one is the portal.
    static let garbageStandIn = """
        import json, os, random, socket, sys
        path = sys.argv[1]
        server = socket.socket(socket.AF_UNIX)
        server.bind(path)
        server.listen(8)
        print('ready', flush=True)
        rng = random.Random(7)
        def document(state, fault, usable):
            return json.dumps({'state': state, 'reason': 'x', 'reason_detail': 'words', 'target': None,
                'fault': fault, 'since': '2026-11-29T05:40:01.123Z', 'likely_connected': False,
                'sequence': rng.randrange(1 << 50), 'reset': False, 'version': '1', 'usable_interfaces': usable,
                'targets': [{'name': 'server', 'kind': 'http', 'host': 'server.test', 'port': 80,
                    'health': 'healthy' if state == 'connected' else 'unhealthy', 'reason': None,
                    'timings': {'total_seconds': 0.01}, 'certificate': None}],
                'portal': None, 'interfaces': [], 'degraded_families': []})
        cycle = [('connected', None, ['eth0']), ('disconnected', 'server', ['eth0']),
                 ('disconnected', 'portal', ['eth0']), ('disconnected', 'link', [])]
        head = b'HTTP/1.1 200 OK\\r\\nContent-Type: text/event-stream\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n'
        def chunked(data):
            # In chunks split at random places, as a network may deliver them.
            out, at = b'', 0
            while at < len(data):
                size = rng.randint(1, 200)
                out += b'%x\\r\\n' % len(data[at:at + size]) + data[at:at + size] + b'\\r\\n'
                at += size
            return out
        def accept():
            c, _ = server.accept()
            c.recv(4096)
            return c
        # 1: the first verdict (the state at start); once the test has seen the program start
        # ("go"), 199 more, each different from the one before, then broken chunked framing.
        c = accept()
        c.sendall(head + chunked(('data: %s\\n\\n' % document(*cycle[0])).encode()))
        sys.stdin.readline()
        for i in range(1, 200):
            state, fault, usable = cycle[i % 4]
            c.sendall(chunked(('id: %d\\ndata: %s\\n\\n' % (i, document(state, fault, usable))).encode()))
        c.sendall(b'zz\\r\\n')
        c.close(); print('served 1', flush=True)
        # 2: plain framing: truncated documents, random bytes, then a 2 MiB line.
        c = accept()
        c.sendall(head.replace(b'Transfer-Encoding: chunked\\r\\n', b''))
        full = document('connected', None, ['eth0']).encode()
        for i in range(300):
            cut = full[:rng.randrange(len(full))]
            noise = bytes(rng.randrange(256) for _ in range(rng.randrange(64))).replace(b'\\n', b' ')
            c.sendall(b'data: ' + cut + b'\\n\\n' + b'data: ' + noise + b'\\n\\n')
        try:
            c.sendall(b'data: ' + b'x' * (2 << 20))
        except OSError:
            pass
        c.close(); print('served 2', flush=True)
        # 3: reachd asking for a token.
        c = accept(); c.sendall(b'HTTP/1.1 401 Unauthorized\\r\\nContent-Length: 0\\r\\n\\r\\n'); c.close()
        print('served 3', flush=True)
        # 4: not HTTP at all.
        c = accept(); c.sendall(bytes(rng.randrange(256) for _ in range(65536))); c.close()
        print('served 4', flush=True)
        # 5: reachd again, behind a portal; held open.
        c = accept()
        c.sendall(head + chunked(('data: %s\\n\\n' % document('disconnected', 'portal', ['eth0'])).encode()))
        print('served 5', flush=True)
        sys.stdin.read()
        """
}
