import Foundation
import ReachTesting
import Testing

/// The built `reachd` binary, next to the test bundle.
let reachdBinary: URL = {
    let products = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
    return products.appending(path: "reachd")
}()

/// A `reachd` process with its output captured.
struct ReachdProcess {
    private let child: Child
    var process: Process { child.process }

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        // Any free port, so that daemons of parallel tests do not collide on 9780.
        // Log lines on standard error, where these tests read them, even when a journald runs (`auto` would pick it).
        let arguments = arguments.contains("--check-config")
            ? arguments
            : arguments + (arguments.contains("--listen") ? [] : ["--listen", "127.0.0.1:0"])
                + (arguments.contains("--log-target") ? [] : ["--log-target", "stderr"])
        child = try Child(reachdBinary, arguments, environment: environment)
    }

    /// Waits for the process to exit (killing it after `timeout`) and returns what it printed.
    func finish(timeout: Duration = .seconds(10)) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await child.finish(timeout: timeout)
    }

    /// Reads standard error until it contains `text`; returns all of it so far.
    func waitForLog(containing text: String, timeout: Duration = .seconds(20)) async throws -> String {
        try await child.waitFor(text, on: .errors, timeout: timeout)
    }

    /// Waits for the status endpoint to listen and returns its TCP port.
    func waitForPort() async throws -> Int? {
        let log = try await waitForLog(containing: "Server started and listening on")
        guard let range = log.range(of: "listening on 127.0.0.1:") else {
            Issue.record("no listening line in:\n\(log)")
            return nil
        }
        return Int(log[range.upperBound...].prefix { $0.isNumber })
    }
}

let shippedConfig = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appending(path: "config/reachd.yaml").path

@Suite("reachd as a process", .serialized)
struct DaemonProcessTests {
    @Test(arguments: [SIGTERM, SIGINT])
    func runsUntilSignalledThenExitsZeroWithinASecond(signal: Int32) async throws {
        let reachd = try ReachdProcess(["--config", shippedConfig])
        let startup = try await reachd.waitForLog(containing: "reachd running")
        #expect(startup.contains("watching server: http://127.0.0.1:8080/api/v1/health every 1s, timeout 2s"))
        try await Task.sleep(for: .milliseconds(200))
        #expect(reachd.process.isRunning, "reachd must keep running until signalled")
        let signalled = ContinuousClock.now
        kill(reachd.process.processIdentifier, signal)
        let (status, _, stderr) = try await reachd.finish()
        let stopTime = ContinuousClock.now - signalled
        #expect(status == 0, "\(stderr)")
        #expect(reachd.process.terminationReason == .exit)
        #expect(stopTime < .seconds(1), "stopped in \(stopTime)")
        #expect(stderr.contains("msg=\"reachd stopped\""))
    }

    @Test func checkConfigSaysOkForTheShippedFile() async throws {
        let (status, stdout, _) = try await ReachdProcess(["--check-config", shippedConfig]).finish()
        #expect(status == 0)
        #expect(stdout == "ok\n")
    }

    @Test func checkConfigListsEveryProblemAndExits78() async throws {
        let directory = try TemporaryDirectory("bad-config")
        let file = directory.url.appending(path: "reachd.yaml")
        try "targets:\n  - name: a\n    url: http://h/\n    timout: 3s\npolicy: most\n".write(to: file, atomically: true, encoding: .utf8)
        let (status, stdout, _) = try await ReachdProcess(["--check-config", file.path]).finish()
        #expect(status == 78)
        #expect(stdout.contains("\(file.path):4:5: targets[0].timout: unknown key; did you mean \"timeout\"?"))
        #expect(stdout.contains("\(file.path):5:9: policy: \"most\" is not one of all, any"))
    }

    @Test func aBrokenConfigurationStopsStartupWithExit78NamingTheKey() async throws {
        let directory = try TemporaryDirectory("bad-config")
        let file = directory.url.appending(path: "reachd.yaml")
        try "server:\n  base_url: http://h/\nprobe:\n  interval: 1\n".write(to: file, atomically: true, encoding: .utf8)
        let (status, _, stderr) = try await ReachdProcess([], environment: ["REACHD_CONFIG": file.path]).finish()
        #expect(status == 78)
        #expect(stderr.contains("probe.interval: \"1\" is not a duration"))
    }

    @Test func withoutAConfigurationItRunsTheEmbeddedDefault() async throws {
        let reachd = try ReachdProcess([], environment: ["REACHD_CONFIG": ""])
        let startup = try await reachd.waitForLog(containing: "reachd running")
        #expect(startup.contains("config=\"embedded default configuration\""))
        reachd.process.terminate()
        let (status, _, stderr) = try await reachd.finish()
        #expect(status == 0, "\(stderr)")
    }
}
