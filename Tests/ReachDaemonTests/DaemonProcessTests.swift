import Foundation
import ReachTestRigs
import ReachTesting
import Testing

@Suite("reachd as a process", .serialized)
struct DaemonProcessTests {
    @Test(arguments: [SIGTERM, SIGINT])
    func runsUntilSignalledThenExitsZeroWithinASecond(signal: Int32) async throws {
        let reachd = try ReachdProcess(["--config", BuiltProducts.shippedConfiguration])
        let startup = try await reachd.waitForLog(containing: "reachd running")
        #expect(startup.contains("watching server: http://127.0.0.1:8080/api/v1/health every 1s, timeout 2s"))
        // Running, not just started: it serves its API and has decided a first verdict.
        let port = try await reachd.waitForPort()
        try await waitUntil("a first verdict", every: .milliseconds(10)) {
            let body = await ReachdProcess.status(port: port) ?? ""
            return body.contains("\"state\":\"connected\"") || body.contains("\"state\":\"disconnected\"")
        }
        #expect(reachd.isRunning, "reachd must keep running until signalled")
        reachd.signal(signal)
        let stopTime = await reachd.waitForExit()
        let result = await reachd.finish()
        #expect(result.status == 0, "\(result.errors)")
        #expect(!reachd.wasSignalled)
        #expect(stopTime < .seconds(1), "stopped in \(stopTime)")
        #expect(result.errors.contains("msg=\"reachd stopped\""))
    }

    /// systemd's watchdog ends a wedged reachd with SIGABRT. The Swift runtime's backtracer, which
    /// this (dynamically linked) build finds in its toolchain, would catch it, print a backtrace and
    /// let reachd run on: the signal must end it, by its default action.
    @Test func sigabrtEndsItAsTheWatchdogExpects() async throws {
        let reachd = try ReachdProcess(["--config", BuiltProducts.shippedConfiguration])
        try await reachd.waitForLog(containing: "reachd running")
        // The runtime looks for swift-backtrace relative to the libswiftCore it loaded. (/proc's
        // files say they are empty: cat reads them to their end.)
        let maps = try await runProgram("/bin/cat", ["/proc/\(reachd.processIdentifier)/maps"]).output
        let runtime = try #require(
            maps.split(separator: "\n").lazy.compactMap { $0.split(separator: " ").last }
                .first { $0.hasSuffix("/libswiftCore.so") }
        )
        let backtracer = URL(filePath: String(runtime)).deletingLastPathComponent()
            .appending(path: "../../../libexec/swift/linux/swift-backtrace").standardized.path
        try #require(
            FileManager.default.isExecutableFile(atPath: backtracer),
            "without the backtracer at \(backtracer) this test proves nothing"
        )
        reachd.signal(SIGABRT)
        let stopTime = await reachd.waitForExit(timeout: .seconds(20))
        #expect(reachd.wasSignalled && reachd.terminationStatus == SIGABRT, "\(reachd.log.suffix(2000))")
        #expect(stopTime < .seconds(10), "ended after \(stopTime)")
    }

    @Test func checkConfigSaysOkForTheShippedFile() async throws {
        let result = try await ReachdProcess(["--check-config", BuiltProducts.shippedConfiguration]).finish()
        #expect(result.status == 0)
        #expect(result.output == "ok\n")
    }

    @Test func checkConfigListsEveryProblemAndExits78() async throws {
        let directory = try TemporaryDirectory("bad-config")
        let file = directory.url.appending(path: "reachd.yaml")
        try "targets:\n  - name: a\n    url: http://h/\n    timout: 3s\npolicy: most\n".write(
            to: file,
            atomically: true,
            encoding: .utf8
        )
        let result = try await ReachdProcess(["--check-config", file.path]).finish()
        #expect(result.status == 78)
        #expect(result.output.contains("\(file.path):4:5: targets[0].timout: unknown key; did you mean \"timeout\"?"))
        #expect(result.output.contains("\(file.path):5:9: policy: \"most\" is not one of all, any"))
    }

    @Test func aBrokenConfigurationStopsStartupWithExit78NamingTheKey() async throws {
        let directory = try TemporaryDirectory("bad-config")
        let file = directory.url.appending(path: "reachd.yaml")
        try "server:\n  base_url: http://h/\nprobe:\n  interval: 1\n".write(to: file, atomically: true, encoding: .utf8)
        let result = try await ReachdProcess([], environment: ["REACHD_CONFIG": file.path]).finish()
        #expect(result.status == 78)
        #expect(result.errors.contains("probe.interval: \"1\" is not a duration"))
    }

    @Test func withoutAConfigurationItRunsTheEmbeddedDefault() async throws {
        let reachd = try ReachdProcess([], environment: ["REACHD_CONFIG": ""])
        let startup = try await reachd.waitForLog(containing: "reachd running")
        #expect(startup.contains("config=\"embedded default configuration\""))
        reachd.signal(SIGTERM)
        let result = await reachd.finish()
        #expect(result.status == 0, "\(result.errors)")
    }
}
