import Foundation
import Logging
import ReachConfig
import ReachCore
import ReachTestRigs
import ReachTesting
import Testing

@testable import ReachHooks

/// Hook scripts run as real processes: order, environment, output, exit status, timeouts that
/// kill the whole process group, floods, forks, and the dispatcher's refusal rules.
@Suite("Hooks: running a directory", .serialized)
struct HookRunnerTests {
    let folder: HookFolder
    let logs = CapturedLogs()
    let observer = RecordingObserver()

    init() throws {
        folder = try HookFolder()
    }

    func runner(timeout: Duration = .seconds(10), killGrace: Duration = .seconds(1)) -> HookRunner {
        HookRunner(
            direction: .restored,
            settings: HookSettings(restoredDirectory: folder.path, timeout: timeout, killGrace: killGrace),
            observer: observer,
            names: HookNames(),
            logger: logs.logger
        )
    }

    /// `30-hangs`: writes its pid and its child's, then sleeps. Both ignore SIGTERM (an ignored
    /// signal stays ignored across fork and exec): only a SIGKILL to the whole group ends them.
    func writeHangingHook() async throws {
        try await folder.script(
            "30-hangs",
            """
            trap '' TERM
            sleep 300 &
            echo $! > \(folder.path)/grandchild.pid
            echo $$ > \(folder.path)/hook.pid
            sleep 300
            """
        )
    }

    func waitUntilTheHangingHookIsGone() async throws {
        let hook = try #require(Int32(folder.lines("hook.pid").first ?? ""))
        let grandchild = try #require(Int32(folder.lines("grandchild.pid").first ?? ""))
        try await waitUntil("the hook and its forked child are gone", timeout: .seconds(5)) {
            processIsGone(hook) && processIsGone(grandchild)
        }
    }

    func hookLines(_ hook: String) -> [CapturedLogs.Entry] {
        logs.all.filter { $0.metadata["hook"] == "\(hook)" && $0.metadata["stream"] != nil }
    }

    @Test func hooksRunOneAfterAnotherInLexicalOrderWithACleanEnvironment() async throws {
        for name in ["20-second", "9-last", "10-first"] {
            try await folder.script(
                name,
                "echo \(name) >> \(folder.path)/order\ntr '\\0' '\\n' < /proc/$$/environ > \(folder.path)/env-\(name)"
            )
        }
        try await runner().run(for: transition(.restored, sequence: 77))
        #expect(folder.lines("order") == ["10-first", "20-second", "9-last"], "byte order, like ls under LC_ALL=C")
        let environment = Set(folder.lines("env-10-first"))
        #expect(
            environment == [
                "PATH=\(HookRunner.path)", "REACHD_STATE=connected", "REACHD_PREVIOUS_STATE=disconnected",
                "REACHD_REASON=healthy",
                "REACHD_FAULT=", "REACHD_INTERFACE=eth0", "REACHD_REACHABLE_INTERFACES=", "REACHD_SEQUENCE=77",
                "REACHD_SINCE=2027-01-15T08:00:00.000Z",
            ],
            "PATH and the REACHD_ variables, nothing of the daemon's own environment"
        )
        #expect(observer.hooks.map(\.outcome) == [.ok, .ok, .ok])
        #expect(Set(folder.lines("env-20-second")) == environment)
    }

    @Test func aHookRunsInRootWithNoneOfReachdsDescriptors() async throws {
        // A pipe without close-on-exec, as a library in reachd might make one.
        var leak: [Int32] = [-1, -1]
        try #require(pipe(&leak) == 0)
        defer { leak.forEach { close($0) } }
        var status = stat()
        try #require(fstat(leak[1], &status) == 0)
        try await folder.script(
            "10-descriptors",
            "pwd\nfor fd in /proc/$$/fd/*; do echo \"${fd##*/} $(readlink $fd)\"; done"
        )
        try await runner().run(for: transition(.restored))
        let lines = hookLines("10-descriptors").map {
            $0.message.replacingOccurrences(of: "10-descriptors: ", with: "")
        }
        #expect(lines.first == "/")
        let descriptors = Dictionary(
            lines.dropFirst().map { line in (line.prefix { $0 != " " }, line.drop { $0 != " " }.dropFirst()) },
            uniquingKeysWith: { first, _ in first }
        )
        #expect(descriptors["0"] == "/dev/null")
        #expect(descriptors["1"]?.hasPrefix("pipe:") == true && descriptors["2"]?.hasPrefix("pipe:") == true)
        #expect(!descriptors.values.contains("pipe:[\(status.st_ino)]"), "\(descriptors)")
        #expect(!descriptors.values.contains { $0.hasPrefix("socket:") }, "\(descriptors)")
    }

    @Test func behindACaptivePortalAHookIsToldWhereToSignIn() async throws {
        try await folder.script("10-portal", "tr '\\0' '\\n' < /proc/$$/environ > \(folder.path)/env")
        var lost = transition(.lost)
        lost.verdict.reason = .captivePortal
        lost.verdict.portal = CaptivePortal(
            evidence: .redirect,
            userPortalURL: "http://portal.example/login?from=reachd"
        )
        lost.verdict.fault = .portal
        try await runner().run(for: lost)
        let environment = Set(folder.lines("env"))
        #expect(environment.contains("REACHD_REASON=captive_portal"))
        #expect(environment.contains("REACHD_FAULT=portal"))
        #expect(environment.contains("REACHD_PORTAL_URL=http://portal.example/login?from=reachd"))
    }

    @Test func aHookIsToldWhichUplinksReachTheTargets() async throws {
        try await folder.script("10-uplinks", "tr '\\0' '\\n' < /proc/$$/environ > \(folder.path)/env")
        var restored = transition(.restored)
        restored.verdict.interfaces = [
            InterfaceReachability(name: "eth0", reachable: false, reason: .timeout, fault: .server),
            InterfaceReachability(name: "wwan0", reachable: true),
            InterfaceReachability(name: "wlan0", reachable: true),
        ]
        try await runner().run(for: restored)
        #expect(Set(folder.lines("env")).contains("REACHD_REACHABLE_INTERFACES=wwan0,wlan0"))
    }

    @Test func outputIsLoggedLineByLineUnderTheHooksNameAndAFailureIsLoggedAndCounted() async throws {
        try await folder.script(
            "50-fails",
            "echo 'syncing spool'\necho 'spool server refused' >&2\nprintf 'no newline at the end'\nexit 3"
        )
        await #expect(throws: HookRunner.HooksFailed.self) { try await runner().run(for: transition(.restored)) }
        let lines = hookLines("50-fails")
        #expect(
            lines.filter { $0.metadata["stream"] == "stdout" }.map(\.message) == [
                "50-fails: syncing spool", "50-fails: no newline at the end",
            ]
        )
        #expect(lines.filter { $0.metadata["stream"] == "stderr" }.map(\.message) == ["50-fails: spool server refused"])
        #expect(lines.filter { $0.metadata["stream"] == "stdout" }.allSatisfy { $0.level == .info })
        let failure = try #require(logs.warnings.first { $0.metadata["exit_status"] == "3" })
        #expect(failure.metadata[ReachLogEvent.metadataKey] == "\(ReachLogEvent.hookFailed.rawValue)")
        #expect(failure.message.contains("50-fails exited 3"))
        #expect(observer.hooks.map(\.outcome) == [.failed])
    }

    @Test func aHookPastItsTimeoutIsKilledWithEverythingItForked() async throws {
        try await writeHangingHook()
        let started = ContinuousClock.now
        await #expect(throws: HookRunner.HooksFailed.self) {
            try await runner(timeout: .seconds(1), killGrace: .milliseconds(500)).run(for: transition(.restored))
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(1500), "the timeout, then the grace period")
        #expect(elapsed < .seconds(5), "took \(elapsed)")
        try await waitUntilTheHangingHookIsGone()
        #expect(observer.hooks.map(\.outcome) == [.timedOut])
        #expect(
            logs.warnings.contains {
                $0.message.contains("30-hangs timed out") && $0.metadata["event"] == "hook_failed"
            }
        )
    }

    @Test func aHookPastItsTimeoutGetsSIGTERMFirstAndMayCleanUp() async throws {
        // The hook starts with default signal dispositions even when reachd ignores SIGTERM
        // (service-lifecycle does, to handle it itself).
        try await folder.script("35-cleans-up", "trap 'echo cleaning up; exit 0' TERM\nsleep 300 &\nwait")
        let started = ContinuousClock.now
        await #expect(throws: HookRunner.HooksFailed.self) {
            try await runner(timeout: .milliseconds(500), killGrace: .seconds(3)).run(for: transition(.restored))
        }
        #expect(hookLines("35-cleans-up").map(\.message) == ["35-cleans-up: cleaning up"])
        #expect(
            ContinuousClock.now - started < .seconds(3),
            "the whole group exited at SIGTERM: no waiting out the grace period"
        )
        #expect(observer.hooks.map(\.outcome) == [.timedOut])
    }

    @Test func whenReachdStopsARunningHookAndWhatItForkedAreTornDown() async throws {
        try await writeHangingHook()
        let runner = self.runner(timeout: .seconds(60), killGrace: .milliseconds(500))
        let run = Task { try await runner.run(for: transition(.restored)) }
        try await waitUntil("the hook started its child") { folder.lines("grandchild.pid").count == 1 }
        let stopped = ContinuousClock.now
        run.cancel()
        _ = try? await run.value
        #expect(ContinuousClock.now - stopped < .seconds(5), "torn down in \(ContinuousClock.now - stopped)")
        try await waitUntilTheHangingHookIsGone()
        #expect(observer.hooks.map(\.outcome) == [.cancelled])
    }

    @Test func aHookThatForksAndExitsEndsItsRunAtOnce() async throws {
        try await folder.script("40-forks", "sleep 300 &\necho $! > \(folder.path)/child.pid\necho started")
        let started = ContinuousClock.now
        try await runner(timeout: .seconds(30)).run(for: transition(.restored))
        #expect(
            ContinuousClock.now - started < .seconds(5),
            "the child still holds the output pipe, yet the run ends with the hook"
        )
        let child = try #require(Int32(folder.lines("child.pid").first ?? ""))
        #expect(
            !processIsGone(child),
            "a hook that exits on its own keeps what it started (document: detach long-lived work)"
        )
        kill(child, SIGKILL)
        #expect(hookLines("40-forks").map(\.message) == ["40-forks: started"])
        #expect(observer.hooks.map(\.outcome) == [.ok])
    }

    @Test func aFloodOfOutputIsBoundedInLinesAndMemoryAndTheHookIsNeverBlocked() async throws {
        let floodLines = 100_000
        let bytesWithoutNewline = 64 * 1024 * 1024
        try await folder.script(
            "60-floods",
            "seq 1 \(floodLines)\nhead -c \(bytesWithoutNewline) /dev/zero | tr '\\0' x\necho\necho done >&2"
        )
        let before = residentBytes()
        try await runner(timeout: .seconds(60)).run(for: transition(.restored))
        let grown = residentBytes() - before
        #expect(grown < 32 * 1024 * 1024, "64 MiB in one line went through \(grown) bytes of growth")
        let lines = hookLines("60-floods")
        #expect(lines.count == OutputBudget.defaultLines)
        #expect(lines.first?.message == "60-floods: 1")
        let total = floodLines + 2
        #expect(logs.contains("\(total - OutputBudget.defaultLines) more output lines not logged"))
        #expect(observer.hooks.map(\.outcome) == [.ok], "the hook finished: reading never stopped")
    }

    @Test func aLongLineIsCutAndTheNextLineStillArrives() async throws {
        let length = OutputLines.maximumLength + 1000
        try await folder.script("70-long", "head -c \(length) /dev/zero | tr '\\0' y\necho\necho after")
        try await runner().run(for: transition(.restored))
        let lines = hookLines("70-long").map(\.message)
        #expect(lines.count == 2)
        #expect(
            lines.first == "70-long: " + String(repeating: "y", count: OutputLines.maximumLength)
                + " […1000 more bytes not logged]"
        )
        #expect(lines.last == "70-long: after")
    }

    @Test func filesBreakingTheDispatcherRulesAreRefusedEachWithItsReason() async throws {
        let nobody: uid_t = 65534
        try await folder.script("10-not-executable", "exit 0", mode: 0o644)
        try await folder.script("20-world-writable", "exit 0", mode: 0o757)
        try await folder.script("30-group-writable", "exit 0", mode: 0o775)
        try await folder.script("40-not-roots", "exit 0", owner: nobody)
        try await folder.script("50-setuid", "exit 0", mode: 0o4755)
        try FileManager.default.createDirectory(
            atPath: "\(folder.path)/60-a-directory",
            withIntermediateDirectories: false
        )
        try FileManager.default.createSymbolicLink(atPath: "\(folder.path)/70-masked", withDestinationPath: "/dev/null")
        try await folder.script("80-fine", "echo ran")
        try await folder.script(".hidden", "echo should-not-run")
        try await folder.script("80-fine~", "echo should-not-run")
        await #expect(throws: HookRunner.HooksFailed.self) { try await runner().run(for: transition(.restored)) }
        let reasons = [
            "10-not-executable": "not executable", "20-world-writable": "writable by others",
            "30-group-writable": "writable by its group",
            "40-not-roots": "owned by uid 65534", "50-setuid": "setuid", "60-a-directory": "not a regular file",
            "70-masked": "not a regular file",
        ]
        for (name, reason) in reasons {
            let line = logs.warnings.first { $0.metadata["hook"] == "\(name)" }
            #expect(
                line?.message.contains("refused: it is") == true && line?.message.contains(reason) == true,
                "\(name): \(String(describing: line))"
            )
            #expect(line?.metadata["event"] == "hook_failed")
        }
        #expect(hookLines("80-fine").map(\.message) == ["80-fine: ran"])
        #expect(observer.hooks.filter { $0.outcome == .refused }.count == reasons.count)
        #expect(!logs.contains("should-not-run"))
    }

    @Test func aHookThatCannotStartIsReportedAndTheNextStillRuns() async throws {
        let hook = "\(folder.path)/10-bad-interpreter"
        try await writeExecutable("#!/nonexistent/interpreter\n", to: hook)
        try await folder.script("20-fine", "echo ran")
        await #expect(throws: HookRunner.HooksFailed.self) { try await runner().run(for: transition(.restored)) }
        #expect(observer.hooks.map(\.outcome) == [.notStarted, .ok])
        #expect(
            logs.warnings.contains {
                $0.message.contains("10-bad-interpreter could not start") && $0.metadata["event"] == "hook_failed"
            }
        )
        #expect(hookLines("20-fine").map(\.message) == ["20-fine: ran"])
    }

    /// `ETXTBSY`: the file is still open for writing (an editor saving it, or another process
    /// that forked while holding such a descriptor). The spawn is tried again until it is closed.
    @Test func aHookStillOpenForWritingRunsOnceTheWriterClosesIt() async throws {
        let hook = try await folder.script("10-being-saved", "echo ran")
        let writer = open(hook, O_WRONLY | O_CLOEXEC)
        try #require(writer >= 0)
        let opens = try OpenWatch(hook)
        let closer = Task {
            // The first exec attempt opens the file and fails (it is still open for writing): the
            // writer closes then, within the runner's retries.
            let attempted = await opens.nextOpen(timeout: .seconds(10))
            close(writer)
            return attempted
        }
        try await runner().run(for: transition(.restored))
        #expect(await closer.value, "the runner tried to exec the hook while it was open for writing")
        #expect(observer.hooks.map(\.outcome) == [.ok])
        #expect(hookLines("10-being-saved").map(\.message) == ["10-being-saved: ran"])
    }

    @Test func linesAreSplitOnNewlinesWithCarriageReturnsDroppedAndBadUTF8Replaced() {
        var lines = OutputLines()
        var seen: [String] = []
        let chunks: [[UInt8]] = [
            Array("dos line\r\nsplit ".utf8), Array("across reads\n".utf8), [0x62, 0x61, 0x64, 0xFF, 0x0A],
            Array("tail".utf8),
        ]
        for chunk in chunks {
            chunk.withUnsafeBytes { lines.feed($0) { seen.append($0) } }
        }
        lines.finish { seen.append($0) }
        #expect(seen == ["dos line", "split across reads", "bad\u{FFFD}", "tail"])
    }

    @Test func aDirectoryOthersCanWriteRunsNothing() async throws {
        try await folder.script("10-would-run", "echo ran")
        chmod(folder.path, 0o777)
        await #expect(throws: HookRunner.HooksFailed.self) { try await runner().run(for: transition(.restored)) }
        #expect(hookLines("10-would-run").isEmpty)
        #expect(
            logs.warnings.contains {
                $0.message.contains("writable by others than root") && $0.metadata["event"] == "hook_failed"
            }
        )
    }

    @Test func theDirectoryIsReadAgainForEachTransition() async throws {
        let runner = self.runner()
        try await runner.run(for: transition(.restored, sequence: 1))
        try await folder.script("10-added-later", "echo $REACHD_SEQUENCE >> \(folder.path)/runs")
        try await runner.run(for: transition(.restored, sequence: 2))
        #expect(folder.lines("runs") == ["2"])
    }

    @Test func aMissingDirectoryMeansNoHooks() async throws {
        folder.remove()
        try await runner().run(for: transition(.restored))
        #expect(observer.hooks.isEmpty)
        #expect(logs.warnings.isEmpty)
    }
}
