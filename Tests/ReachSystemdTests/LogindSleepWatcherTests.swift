import Foundation
import Logging
import ReachCore
import ReachSupport
import ReachSystemd
import ReachTestRigs
import ReachTesting
import Synchronization
import Testing

/// The watcher against a real private dbus-daemon, with a stand-in for logind emitting
/// PrepareForSleep. Timing bounds are generous: they check behaviour, not speed.
@Suite(.enabled(if: PrivateSystemBus.isAvailable, Comment(rawValue: PrivateSystemBus.unavailableReason)))
struct LogindSleepWatcherBusTests {
    /// A private bus with the logind stand-in on it, and a watcher subscribed to it; all stopped
    /// whatever the test does.
    private func withRig(
        onChange: @escaping @Sendable (Bool) -> Void = { _ in },
        _ body: (PrivateSystemBus, LogindStandIn, RunningWatcher) async throws -> Void
    ) async throws {
        let bus = try await PrivateSystemBus.start()
        let logind: LogindStandIn
        do {
            logind = try await bus.startLogind()
        } catch {
            await bus.stop()
            throw error
        }
        let watcher = RunningWatcher(address: bus.address, onChange: onChange)
        do {
            try await watcher.waitUntilSubscribed()
            try await body(bus, logind, watcher)
        } catch {
            await watcher.cancel()
            await logind.stop()
            await bus.stop()
            throw error
        }
        await watcher.cancel()
        await logind.stop()
        await bus.stop()
    }

    @Test func sleepThenWakeAreReportedInOrder() async throws {
        try await withRig { _, logind, watcher in
            try await logind.sleep()
            try await watcher.waitForReports(1)
            #expect(watcher.reported == [true])
            try await logind.wake()
            try await watcher.waitForReports(2)
            #expect(watcher.reported == [true, false])

            // A burst keeps its order too.
            try await logind.sleep()
            try await logind.wake()
            try await logind.sleep()
            try await watcher.waitForReports(5)
            #expect(watcher.reported == [true, false, true, false, true])
            #expect(watcher.logs.warnings.isEmpty, "\(watcher.logs.warnings)")
        }
    }

    @Test func signalsFromAnyoneButTheOwnerOfLogindsNameAreIgnored() async throws {
        try await withRig { bus, logind, watcher in
            try await logind.spoofSleep()
            try await logind.sleep()
            try await logind.wake()
            try await watcher.waitForReports(2)
            #expect(watcher.reported == [true, false])
            // A spoof that may overtake or trail the real ones: once a monitor on the bus has seen
            // it, the bus has queued it for every recipient, so it reaches the watcher (if at all)
            // before the owner's next signal, whose report then shows the spoof ignored.
            let monitor = try ChildProcess(
                "dbus-monitor",
                executable: "/usr/bin/dbus-monitor",
                arguments: ["--address", bus.address, "type='signal',member='PrepareForSleep'"]
            )
            do {
                // NameLost follows BecomeMonitor: from here on, the monitor sees every matching signal.
                try await monitor.waitForLine { $0.contains("member=NameLost") }
                try await logind.spoofSleep()
                try await monitor.waitForLine { $0.contains("member=PrepareForSleep") }
            } catch {
                monitor.signal(SIGKILL)
                await monitor.waitForExit()
                throw error
            }
            monitor.signal(SIGKILL)
            await monitor.waitForExit()
            try await logind.sleep()
            try await watcher.waitForReports(3)
            #expect(watcher.reported == [true, false, true])
        }
    }

    @Test func drivesTheMonitorsProbeControlThroughSleepAndWake() async throws {
        let clock = TestClock()
        let monitor = ConnectivityMonitor(
            configuration: .init(targets: [.http("server")]),
            clock: clock.monitorClock,
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        let monitorRun = Task { await monitor.run() }
        defer { monitorRun.cancel() }
        monitor.update(links: .of(.usable()))

        let controls = Mutex<[ProbeControl]>([])
        let stream = monitor.probeControl()
        let reader = Task {
            for await control in stream { controls.withLock { $0.append(control) } }
        }
        defer { reader.cancel() }
        try await waitUntil("the current probe control") { !controls.withLock { $0.isEmpty } }
        let before = try #require(controls.withLock { $0.last })
        #expect(before.suspension == nil, "a usable link and no sleep: probing runs")

        try await withRig(onChange: { monitor.setSystemSleeping($0) }) { _, logind, _ in
            try await logind.sleep()
            try await waitUntil("probing suspended for sleep") {
                controls.withLock { $0.last?.suspension == .systemSleeping }
            }
            try await logind.wake()
            try await waitUntil("probing resumed after wake") {
                controls.withLock { $0.last?.suspension == nil && $0.count > 2 }
            }
            let after = try #require(controls.withLock { $0.last })
            #expect(after.suspension == nil)
            #expect(
                after.immediateProbeRequests > before.immediateProbeRequests,
                "waking asks for a probe of every target now"
            )
        }
        monitorRun.cancel()
        await monitorRun.value
    }

    @Test func cancellationReturnsPromptly() async throws {
        try await withRig { _, logind, watcher in
            try await logind.sleep()
            try await watcher.waitForReports(1)
            let took = await watcher.cancel()
            // A hang detector: the whole suite loads both cores (journald, Xvfb, dunst), so the bound is generous.
            #expect(took < .seconds(10), "run took \(took) to return after cancellation")
            #expect(watcher.logs.warnings.isEmpty, "cancellation is not a failure: \(watcher.logs.warnings)")
            #expect(watcher.reported == [true], "cancellation does not invent a wake")
        }
    }

    @Test func killingTheBusEndsTheRunWithOneWarningAndAWake() async throws {
        try await withRig { bus, logind, watcher in
            try await logind.sleep()
            try await watcher.waitForReports(1)
            await bus.kill()
            try await watcher.waitForReturn()
            #expect(watcher.logs.warnings.count == 1, "\(watcher.logs.warnings)")
            let warning = try #require(watcher.logs.warnings.first)
            #expect(warning.message.contains("lost the system bus connection"), "\(warning)")
            #expect(
                watcher.reported == [true, false],
                "with the bus gone no wake would ever come, so probing must not stay suspended"
            )
        }
    }

    @Test func killingTheBusWhileAwakeReportsNothing() async throws {
        try await withRig { bus, _, watcher in
            await bus.kill()
            try await watcher.waitForReturn()
            #expect(watcher.logs.warnings.count == 1, "\(watcher.logs.warnings)")
            #expect(watcher.reported.isEmpty)
        }
    }

    @Test func cancellingBeforeTheBusAnswersReturnsPromptly() async throws {
        let bus = try await PrivateSystemBus.start()
        let watcher = RunningWatcher(address: bus.address)
        let took = await watcher.cancel()
        await bus.stop()
        // A hang detector: the whole suite loads both cores (journald, Xvfb, dunst), so the bound is generous.
        #expect(took < .seconds(10), "run took \(took) to return after cancellation")
        #expect(watcher.logs.warnings.isEmpty, "\(watcher.logs.warnings)")
    }
}

/// Where there is no bus, the watcher gives up at once with one warning. Needs no dbus-daemon.
struct LogindSleepWatcherNoBusTests {
    @Test func aMissingSocketLogsOneWarningAndReturns() async throws {
        let directory = try TemporaryDirectory("no-bus")
        let watcher = RunningWatcher(address: "unix:path=\(directory)/no-such-socket")
        let warning = try await Self.theOneWarning(of: watcher)
        #expect(warning.contains("cannot connect to the system bus"), "\(warning)")
        #expect(warning.contains("no such file"), "the errno text names the cause: \(warning)")
        #expect(watcher.reported.isEmpty)
    }

    @Test func aSocketNobodyListensOnLogsOneWarningAndReturns() async throws {
        let directory = try TemporaryDirectory("dead-bus")
        // A socket file left behind by a dead bus: bound, never listened on.
        let path = "\(directory)/stale_socket"
        let binder = try ChildProcess(
            "socket binder",
            executable: PrivateSystemBus.python,
            arguments: ["-c", "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", path]
        )
        await binder.waitForExit()
        try #require(FileManager.default.fileExists(atPath: path))

        let watcher = RunningWatcher(address: "unix:path=\(path)")
        let warning = try await Self.theOneWarning(of: watcher)
        #expect(warning.contains("connection refused"), "the errno text names the cause: \(warning)")
    }

    @Test func aMalformedAddressLogsOneWarningAndReturns() async throws {
        let watcher = RunningWatcher(address: "not-a-dbus-address")
        try await watcher.waitForReturn()
        #expect(watcher.logs.warnings.count == 1, "\(watcher.logs.all)")
    }

    /// Waits for the watcher to give up, promptly, and gives the one warning it logged.
    private static func theOneWarning(of watcher: RunningWatcher) async throws -> String {
        let took = try await watcher.waitForReturn()
        // A hang detector: the whole suite loads both cores (journald, Xvfb, dunst), so the bound is generous.
        #expect(took < .seconds(10), "run took \(took) to give up")
        #expect(watcher.logs.warnings.count == 1, "\(watcher.logs.all)")
        return try #require(watcher.logs.warnings.first).message
    }
}
