import Foundation
import ReachTestRigs
import ReachTesting

/// reachd watching a health server on loopback, with its status API on a fixed port (and, when
/// asked, a unix socket and a bearer token), so that a test can kill it and start it again where
/// its clients expect it.
final class LocalReachd: Sendable {
    let port: Int
    private let reachd: ReachdProcess

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// - Parameter extra: More YAML (a `socket:`, an `api:` section).
    init(watchingPort healthPort: Int, port: Int, directory: TemporaryDirectory, extra: String = "") async throws {
        self.port = port
        reachd = try ReachdProcess(
            configuration: """
                server:
                  base_url: http://127.0.0.1:\(healthPort)
                  health_path: /api/v1/health
                probe:
                  interval: 200ms
                  timeout: 2s
                  failures_before_down: 2   # one probe slowed by a loaded machine is not a loss
                \(extra)
                """,
            in: directory.path,
            listen: "127.0.0.1:\(port)",
            log: "\(directory)/reachd-\(UUID().uuidString.prefix(6)).log"
        )
        _ = try await reachd.waitForPort(timeout: .seconds(30))
    }

    func signal(_ signal: Int32) { reachd.signal(signal) }

    func kill() async {
        await reachd.kill()
    }
}
