import Foundation
import ReachTesting

/// Where `swift build` put the package's programs: beside the test bundle.
package enum BuiltProducts {
    package static let directory = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
    package static let reachd = directory.appending(path: "reachd").path
    package static let reachctl = directory.appending(path: "reachctl").path
    /// The package's root, for the files it ships (`config/`, `Dashboards/`).
    package static let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// The shipped configuration, `config/reachd.yaml`.
    package static let shippedConfiguration = packageRoot.appending(path: "config/reachd.yaml").path
}

/// reachd as a process: the one way tests start it (``command(_:listen:logTarget:namespace:)``
/// builds its command line, for a journal of the test's own too: ``PrivateJournal/reachd(_:listen:namespace:)``).
///
/// It logs on stderr (whatever journald runs) and, unless told otherwise, serves its API on a
/// free loopback port, so that the daemons of tests running side by side never collide.
package final class ReachdProcess: Sendable {
    private let child: ChildProcess
    /// The configuration file, when the test gave the configuration as text.
    package let configurationPath: String?

    /// Starts reachd with `arguments`.
    /// - Parameters:
    ///   - listen: Added as `--listen` unless `nil` (the configuration's `listen:` then holds)
    ///     or `arguments` name one.
    ///   - environment: Added to the test's environment, less `REACHD_ENDPOINT`.
    ///   - namespace: A network namespace to run it in (`ip netns exec`, which execs: the
    ///     process is reachd itself).
    ///   - log: A file for its log, kept after the test; else it is collected in memory.
    package init(
        _ arguments: [String],
        listen: String? = "127.0.0.1:0",
        environment: [String: String] = [:],
        namespace: TestNamespace? = nil,
        log: String? = nil
    ) throws {
        configurationPath = arguments.firstIndex(of: "--config").flatMap {
            arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
        }
        let command = Self.command(arguments, listen: listen, namespace: namespace)
        child = try ChildProcess(
            "reachd",
            executable: command.executable,
            arguments: command.arguments,
            errorLog: log,
            environment: clientFreeEnvironment(adding: environment)
        )
    }

    /// The command that runs the built reachd with `arguments`, plus `--listen listen` (unless
    /// `nil` or `arguments` name one) and `--log-target logTarget` (unless they name one), in
    /// `namespace` when given (`ip netns exec`, which execs: the process is reachd itself).
    package static func command(
        _ arguments: [String],
        listen: String? = "127.0.0.1:0",
        logTarget: String = "stderr",
        namespace: TestNamespace? = nil
    ) -> (executable: String, arguments: [String]) {
        var arguments = arguments
        if !arguments.contains("--check-config") {
            if let listen, !arguments.contains("--listen") { arguments += ["--listen", listen] }
            if !arguments.contains("--log-target") { arguments += ["--log-target", logTarget] }
        }
        return TestNamespace.command([BuiltProducts.reachd] + arguments, in: namespace)
    }

    /// Writes `configuration` (YAML) to a new file in `directory` and starts reachd on it.
    package convenience init(
        configuration: String,
        in directory: String,
        arguments: [String] = [],
        listen: String? = "127.0.0.1:0",
        environment: [String: String] = [:],
        namespace: TestNamespace? = nil,
        log: String? = nil
    ) throws {
        let path = "\(directory)/reachd-\(UUID().uuidString.prefix(8)).yaml"
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        try self.init(
            ["--config", path] + arguments,
            listen: listen,
            environment: environment,
            namespace: namespace,
            log: log
        )
    }

    package var processIdentifier: Int32 { child.processIdentifier }
    package var isRunning: Bool { child.isRunning }
    package var terminationStatus: Int32 { child.terminationStatus }
    package var wasSignalled: Bool { child.wasSignalled }
    /// Its log so far.
    package var log: String { child.errors }

    /// Waits until its log contains `text`; returns all of the log so far.
    @discardableResult
    package func waitForLog(containing text: String, timeout: Duration = .seconds(20)) async throws -> String {
        try await child.waitForErrors(containing: text, timeout: timeout)
    }

    /// Waits until the status API listens on TCP, and returns its port.
    package func waitForPort(timeout: Duration = .seconds(20)) async throws -> Int {
        // Not the first listening line: with a `socket:`, the unix socket's may come first.
        let log = try await waitForLog(containing: "listening on 127.0.0.1:", timeout: timeout)
        guard let range = log.range(of: "listening on 127.0.0.1:"),
            let port = Int(log[range.upperBound...].prefix { $0.isNumber })
        else {
            throw ChildProcess.Failed(description: "reachd's listening line names no loopback port:\n\(log)")
        }
        return port
    }

    /// Waits until the status API on `port` says `state` (`connected`, `disconnected`, ...).
    package func waitForState(_ state: String, port: Int, timeout: Duration = .seconds(15)) async throws {
        // Each look is a request, made off the cooperative pool (which two blocked threads would
        // stall for every test in the process): every 10 ms.
        try await waitUntil("reachd on \(port) to say \(state)", timeout: timeout, every: .milliseconds(10)) {
            guard self.isRunning else { throw ChildProcess.Failed(description: "reachd exited:\n\(self.log)") }
            return await Self.status(port: port)?.contains("\"state\":\"\(state)\"") == true
        }
    }

    /// The body of `GET /v1/status` on `port`, asked off the cooperative pool; `nil` when it does not answer.
    package static func status(port: Int) async -> String? {
        (try? await loopbackGet(port: port, path: "/v1/status", timeout: .seconds(2)))?.body
    }

    package func signal(_ signal: Int32) { child.signal(signal) }

    /// Waits for the exit (SIGKILL after `timeout`); returns how long it took.
    @discardableResult
    package func waitForExit(timeout: Duration = .seconds(10)) async -> Duration {
        await child.waitForExit(timeout: timeout)
    }

    /// Waits for the exit (SIGKILL after `timeout`) and returns its status and everything it wrote.
    package func finish(timeout: Duration = .seconds(10)) async -> ProgramResult {
        await child.finish(timeout: timeout)
    }

    /// Kills it outright (as a crash would) and waits until it is gone.
    package func kill() async {
        await child.stop()
    }

    /// A safety net for a test that ends early: reachd must not outlive it.
    deinit { child.signal(SIGKILL) }
}

/// Runs the built `reachctl` to its end (killed after `timeout`) and returns what it printed.
/// `environment` is added to the test's, less `REACHD_ENDPOINT`.
package func reachctl(
    _ arguments: [String],
    environment: [String: String] = [:],
    timeout: Duration = .seconds(15)
) async throws -> ProgramResult {
    let child = try ChildProcess(
        "reachctl",
        executable: BuiltProducts.reachctl,
        arguments: arguments,
        environment: clientFreeEnvironment(adding: environment)
    )
    return await child.finish(timeout: timeout)
}

/// The test's environment less `REACHD_ENDPOINT` (a developer's own reachd must not answer for the
/// test's), with `environment` added.
private func clientFreeEnvironment(adding environment: [String: String]) -> [String: String] {
    var inherited = ProcessInfo.processInfo.environment
    inherited["REACHD_ENDPOINT"] = nil
    return inherited.merging(environment) { $1 }
}
