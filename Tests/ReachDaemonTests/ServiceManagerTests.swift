import CoreFoundation
import Foundation
import Logging
import ReachConfig
import ReachCore
import ReachDaemon
import ReachSupport
import ReachSystemd
import ReachTestRigs
import ReachTesting
import Testing

/// A prober that never answers and ignores cancellation: a wedged probe path.
private final class WedgedProber: Prober, Sendable {
    private let release = AsyncStream.makeStream(of: Void.self)

    func probe(_ target: ProbeTarget) async -> ProbeResult {
        for await _ in release.stream {}
        return .success(target.name, latency: .zero)
    }

    /// Lets every stuck probe return, so the test ends cleanly.
    func unwedge() { release.continuation.finish() }
}

@Suite("systemd's notification protocol", .serialized)
struct ServiceManagerTests {
    @Test func reachdTellsSystemdReadyStatusWatchdogReloadingAndStopping() async throws {
        let socket = try NotifySocket()
        let server = try await HealthServer()
        let directory = try TemporaryDirectory("notify-targets")
        let targets = directory.url.appending(path: "targets.txt")
        try "\(server.url)\n".write(to: targets, atomically: true, encoding: .utf8)
        let started = ContinuousClock.now
        let reachd = try ReachdProcess(
            ["--targets-file", targets.path],
            environment: ["REACHD_CONFIG": "", "NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "400000"]
        )

        // READY=1 comes with the first verdict, not before.
        let (ready, beforeReady) = await socket.waitFor { $0.contains("READY=1") }
        #expect(beforeReady.isEmpty, "nothing before READY=1: \(beforeReady)")
        #expect(ready?.value(of: "STATUS")?.hasPrefix("connected") == true, "\(String(describing: ready))")
        #expect(ready?.value(of: "STATUS")?.contains("target-1") == true)
        #expect((ready?.arrived ?? .now) - started < .seconds(10))

        // WATCHDOG=1 every half WATCHDOG_USEC (200 ms) while all is well.
        await socket.drain()
        let window = await socket.collect(for: .milliseconds(1_500))
        let pings = window.filter { $0.contains("WATCHDOG=1") }
        #expect((4...10).contains(pings.count), "\(pings.count) pings in 1.5 s: \(window)")

        // STATUS= follows the verdict.
        await server.stop()
        let (down, _) = await socket.waitFor { $0.value(of: "STATUS")?.hasPrefix("waiting for connectivity") == true }
        #expect(
            down?.value(of: "STATUS") == "waiting for connectivity: target-1 refused",
            "\(String(describing: down))"
        )

        // SIGHUP: RELOADING=1 with the monotonic clock, then READY=1.
        try "http://127.0.0.1:1/other\n".write(to: targets, atomically: true, encoding: .utf8)
        reachd.signal(SIGHUP)
        let (reloading, _) = await socket.waitFor { $0.contains("RELOADING=1") }
        let monotonic = reloading?.value(of: "MONOTONIC_USEC").flatMap(UInt64.init)
        #expect(monotonic != nil, "\(String(describing: reloading))")
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        #expect(monotonic.map { nowMicroseconds >= $0 && nowMicroseconds - $0 < 5_000_000 } == true)
        let (readyAgain, _) = await socket.waitFor { $0.contains("READY=1") }
        #expect(readyAgain != nil)
        _ = try await reachd.waitForLog(containing: "configuration reloaded: targets +0 -0 ~1 (changed: target-1)")

        reachd.signal(SIGTERM)
        let (stopping, _) = await socket.waitFor { $0.contains("STOPPING=1") }
        #expect(stopping != nil)
        let result = await reachd.finish()
        #expect(result.status == 0, "\(result.errors)")
    }

    /// A SIGHUP while reachd starts, before its first verdict, is applied once the reload service
    /// runs and is told to systemd not at all: no RELOADING=1, no READY=1 before the verdict. READY=1
    /// comes once, with the first verdict, which is the reloaded configuration's.
    @Test func aReloadBeforeTheFirstVerdictIsAppliedAndAnnouncesNoReadiness() async throws {
        let socket = try NotifySocket()
        let silent = SilentTCPListener()
        let server = try await HealthServer()
        let directory = try TemporaryDirectory("notify-early-reload")
        let file = directory.url.appending(path: "reachd.yaml")
        // The first target never answers, and its probe waits 10 s: no verdict before the reload.
        try "targets:\n  - name: hung\n    url: http://127.0.0.1:\(silent.port)/health\n    timeout: 10s\n"
            .write(to: file, atomically: true, encoding: .utf8)
        let reachd = try ReachdProcess(["--config", file.path], environment: ["NOTIFY_SOCKET": socket.path])
        _ = try await reachd.waitForLog(containing: "starting")
        try "targets:\n  - name: api\n    url: \(server.url)\n".write(to: file, atomically: true, encoding: .utf8)
        reachd.signal(SIGHUP)

        _ = try await reachd.waitForLog(containing: "configuration reloaded")
        let (ready, beforeReady) = await socket.waitFor { $0.contains("READY=1") }
        #expect(beforeReady.isEmpty, "nothing before the first verdict's READY=1, no RELOADING=1: \(beforeReady)")
        #expect(
            ready?.value(of: "STATUS")?.hasPrefix("connected") == true,
            "the reloaded target's verdict: \(String(describing: ready))"
        )
        // A reload once ready is announced; nothing said READY=1 again in between.
        reachd.signal(SIGHUP)
        let (reloading, between) = await socket.waitFor { $0.contains("RELOADING=1") }
        #expect(reloading != nil)
        #expect(!between.contains { $0.contains("READY=1") }, "\(between)")
        let (readyAgain, _) = await socket.waitFor { $0.contains("READY=1") }
        #expect(readyAgain != nil)

        reachd.signal(SIGTERM)
        let result = await reachd.finish()
        #expect(result.status == 0, "\(result.errors)")
    }

    @Test func aWedgedProbeStopsTheWatchdogSoSystemdRestartsReachd() async throws {
        let socket = try NotifySocket()
        var configuration = try DaemonConfiguration.load(from: .embeddedDefault)
        configuration.listen.port = 0
        configuration.targets = [
            ProbeTarget(
                name: "server",
                check: .tcp(HostPort(host: "127.0.0.1", port: 9)),
                interval: .milliseconds(200),
                timeout: .milliseconds(100)
            )
        ]
        let logs = CapturedLogs()
        let prober = WedgedProber()
        let daemon = Daemon(
            configuration: configuration,
            source: .embeddedDefault,
            linkSource: InMemoryLinkSource(initial: .of(.usable())),
            prober: prober,
            notifier: SystemdNotifier(socket: socket.path, watchdogInterval: .milliseconds(400)),
            logger: logs.logger
        )
        let running = Task { try await daemon.run() }
        defer { prober.unwedge() }

        // With no verdict, READY=1 still comes once the first probes' time is up.
        let (ready, _) = await socket.waitFor(timeout: .seconds(5)) { $0.contains("READY=1") }
        #expect(ready?.value(of: "STATUS") == "starting: awaiting the first probe", "\(String(describing: ready))")
        // The probe is late but not yet past its deadline plus the grace (2 s): still fed.
        let early = await socket.collect(for: .milliseconds(800))
        #expect(early.contains { $0.contains("WATCHDOG=1") }, "\(early)")
        // Past it: no more WATCHDOG=1, and the log says why.
        _ = await socket.collect(for: .milliseconds(1_800))
        let late = await socket.collect(for: .milliseconds(1_500))
        let latePings = late.filter { $0.contains("WATCHDOG=1") }
        #expect(latePings.isEmpty, "a wedged scheduler must not feed the watchdog: \(late) \(logs.all)")
        #expect(logs.contains("probe scheduler is not making progress"), "\(logs.all)")
        running.cancel()
        prober.unwedge()
        try await running.value
    }
}
