import Foundation
import ReachTesting

/// The products directory, where the test bundle, `reachd` and the helpers are built.
private let products = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()

/// reachd as a process, watching a health server on loopback, with its status API on a fixed
/// port (and, when asked, a unix socket and a bearer token), so that a test can kill it and start
/// it again where its clients expect it.
final class LocalReachd: Sendable {
    let port: Int
    let directory: TemporaryDirectory
    private let child: ChildProcess

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// - Parameter extra: More YAML (a `socket:`, an `api:` section).
    init(watchingPort healthPort: Int, port: Int, directory: TemporaryDirectory, extra: String = "") async throws {
        self.port = port
        self.directory = directory
        let config = """
            server:
              base_url: http://127.0.0.1:\(healthPort)
              health_path: /api/v1/health
            probe:
              interval: 200ms
              timeout: 2s
              failures_before_down: 2   # one probe slowed by a loaded machine is not a loss
            \(extra)
            """
        let path = "\(directory)/reachd.yaml"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        child = try ChildProcess(
            "reachd", executable: products.appending(path: "reachd").path,
            arguments: ["--config", path, "--listen", "127.0.0.1:\(port)", "--log-target", "stderr"],
            errorLog: "\(directory)/reachd-\(UUID().uuidString.prefix(6)).log")
        try await waitUntil("reachd listening on \(port)", timeout: .seconds(30)) {
            await offPool { (try? loopbackGet(port: port, path: "/healthz", timeout: .seconds(1))) != nil }
        }
    }

    func signal(_ signal: Int32) { child.signal(signal) }

    func kill() async {
        child.signal(SIGKILL)
        await child.waitForExit()
    }

    /// A safety net for a test that ends early: reachd must not outlive it.
    deinit { child.signal(SIGKILL) }
}
